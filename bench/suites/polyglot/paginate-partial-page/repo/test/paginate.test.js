'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { paginate } = require('../src/paginate.js');

const numbers = (n) => Array.from({ length: n }, (_, i) => i + 1);

test('full pages', () => {
  const result = paginate(numbers(20), 2, 10);
  assert.deepEqual(result.items, numbers(20).slice(10));
  assert.equal(result.pages, 2);
  assert.equal(result.hasNext, false);
});

test('a page size below one is refused', () => {
  assert.throws(() => paginate(numbers(3), 1, 0), RangeError);
});
