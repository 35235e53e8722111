'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { slugify } = require('../src/slug.js');

test('accents are dropped, letters kept', () => {
  assert.equal(slugify('Crème Brûlée'), 'creme-brulee');
});

test('cedilla and umlaut', () => {
  assert.equal(slugify('Façade über Straße'), 'facade-uber-stra-e');
});

test('plain titles are unchanged', () => {
  assert.equal(slugify('Hello,   World!'), 'hello-world');
});
