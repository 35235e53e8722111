'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { slugify } = require('../src/slug.js');

test('words are joined by one dash', () => {
  assert.equal(slugify('Hello,   World!'), 'hello-world');
});

test('no dash at either end', () => {
  assert.equal(slugify('  -- Release 2.0 --  '), 'release-2-0');
});
