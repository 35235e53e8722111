'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { eachDay } = require('../src/dates.js');

test('a start after the end is refused', () => {
  assert.throws(() => eachDay('2024-03-02', '2024-03-01'), RangeError);
});

test('a malformed date is refused', () => {
  assert.throws(() => eachDay('2024-3-1', '2024-03-02'), TypeError);
});
