'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { parseDuration } = require('../src/duration.js');

test('hours and minutes', () => {
  assert.equal(parseDuration('1h30m'), 5400);
});

test('parts separated by spaces', () => {
  assert.equal(parseDuration('1h 5m 10s'), 3910);
});

test('single units still work', () => {
  assert.equal(parseDuration('45s'), 45);
  assert.equal(parseDuration('2h'), 7200);
});

test('what is not a duration throws', () => {
  for (const bad of ['', 'abc', '10', '5d', '1h30']) {
    assert.throws(() => parseDuration(bad), SyntaxError, bad);
  }
});
