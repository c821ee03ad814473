'use strict';
// Time that every process reads alike: the wall clock, in tenths of a millisecond, wrapping at 32
// bits (differences taken with `| 0` stay right across the wrap, for waits under 2.4 days).
const { performance } = require('node:perf_hooks');

function nowTenths() {
  return ((performance.timeOrigin + performance.now()) * 10) | 0;
}

module.exports = { nowTenths };
