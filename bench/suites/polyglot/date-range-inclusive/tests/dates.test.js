'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { eachDay } = require('../src/dates.js');

test('both ends are included', () => {
  assert.deepEqual(eachDay('2024-03-01', '2024-03-03'), ['2024-03-01', '2024-03-02', '2024-03-03']);
});

test('a one-day range is that day', () => {
  assert.deepEqual(eachDay('2023-07-14', '2023-07-14'), ['2023-07-14']);
});

test('a leap day and a year end', () => {
  assert.deepEqual(eachDay('2024-02-28', '2024-03-01'), ['2024-02-28', '2024-02-29', '2024-03-01']);
  assert.deepEqual(eachDay('2023-12-31', '2024-01-01'), ['2023-12-31', '2024-01-01']);
});
