'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { parse } = require('../src/semver.js');

test('parse a release', () => {
  assert.deepEqual(parse('1.2.3'), { major: 1, minor: 2, patch: 3, prerelease: [] });
});

test('parse a pre-release', () => {
  assert.deepEqual(parse('2.0.0-rc.1').prerelease, ['rc', '1']);
});

test('refuse what is not a version', () => {
  assert.throws(() => parse('1.2'), TypeError);
});
