'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { paginate } = require('../src/paginate.js');

const numbers = (n) => Array.from({ length: n }, (_, i) => i + 1);

test('the last, partial page is there', () => {
  const result = paginate(numbers(25), 3, 10);
  assert.deepEqual(result.items, [21, 22, 23, 24, 25]);
  assert.equal(result.pages, 3);
  assert.equal(result.hasNext, false);
});

test('the page before the partial one has a next page', () => {
  assert.equal(paginate(numbers(25), 2, 10).hasNext, true);
});

test('every item is on exactly one page', () => {
  const items = numbers(23);
  const { pages } = paginate(items, 1, 4);
  const seen = [];
  for (let page = 1; page <= pages; page++) seen.push(...paginate(items, page, 4).items);
  assert.deepEqual(seen, items);
});

test('an empty list is one empty page', () => {
  assert.deepEqual(paginate([], 1, 10), { items: [], page: 1, pages: 1, hasNext: false });
});

test('pages out of range still throw', () => {
  assert.throws(() => paginate(numbers(25), 4, 10), RangeError);
  assert.throws(() => paginate(numbers(25), 0, 10), RangeError);
});
