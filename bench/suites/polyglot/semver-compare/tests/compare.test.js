'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { compare } = require('../src/semver.js');

test('numbers compare as numbers', () => {
  assert.ok(compare('1.10.0', '1.9.0') > 0);
  assert.ok(compare('0.9.9', '1.0.0') < 0);
  assert.equal(compare('2.3.4', '2.3.4'), 0);
});

test('a pre-release is below its release', () => {
  assert.ok(compare('1.0.0-rc.1', '1.0.0') < 0);
  assert.ok(compare('1.0.0', '1.0.0-rc.1') > 0);
});

test("Semantic Versioning's own order", () => {
  const ordered = ['1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta',
    '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0'];
  const shuffled = [ordered[5], ordered[7], ordered[0], ordered[3], ordered[6], ordered[1],
    ordered[4], ordered[2]];
  assert.deepEqual(shuffled.sort(compare), ordered);
});
