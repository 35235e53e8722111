'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { splitCsvLine } = require('../src/csv.js');

test('plain fields', () => {
  assert.deepEqual(splitCsvLine('a,b,c'), ['a', 'b', 'c']);
});

test('empty fields are kept', () => {
  assert.deepEqual(splitCsvLine('a,,c,'), ['a', '', 'c', '']);
});
