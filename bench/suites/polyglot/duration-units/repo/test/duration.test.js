'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { parseDuration } = require('../src/duration.js');

test('seconds', () => {
  assert.equal(parseDuration('45s'), 45);
});

test('minutes', () => {
  assert.equal(parseDuration('2m'), 120);
});
