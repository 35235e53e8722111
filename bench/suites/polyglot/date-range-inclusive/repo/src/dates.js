'use strict';

const DAY_MS = 24 * 60 * 60 * 1000;

function toUtc(text) {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) throw new TypeError(`not a YYYY-MM-DD date: ${text}`);
  return Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
}

function eachDay(start, end) {
  const first = toUtc(start);
  const last = toUtc(end);
  if (first > last) throw new RangeError(`${start} is after ${end}`);
  const days = [];
  for (let t = first; t < last; t += DAY_MS) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  return days;
}

module.exports = { eachDay };
