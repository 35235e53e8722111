'use strict';

const UNIT_SECONDS = { h: 3600, m: 60, s: 1 };

function parseDuration(text) {
  const match = /(\d+)([hms])/.exec(text);
  if (!match) return NaN;
  return Number(match[1]) * UNIT_SECONDS[match[2]];
}

module.exports = { parseDuration };
