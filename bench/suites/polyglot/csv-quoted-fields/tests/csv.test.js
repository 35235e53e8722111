'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { splitCsvLine } = require('../src/csv.js');

test('a comma inside quotes belongs to the field', () => {
  assert.deepEqual(splitCsvLine('a,"b,c",d'), ['a', 'b,c', 'd']);
});

test('a doubled quote is one quote', () => {
  assert.deepEqual(splitCsvLine('"say ""hi"" now",x'), ['say "hi" now', 'x']);
});

test('an empty quoted field', () => {
  assert.deepEqual(splitCsvLine('"",b'), ['', 'b']);
});

test('plain lines still split', () => {
  assert.deepEqual(splitCsvLine('a,,c,'), ['a', '', 'c', '']);
});
