'use strict';
// Warm-up for benchmark workers: runs the worker's own measured function against a private,
// uncontended lock of the same implementation (and private control words) before the start
// gate, so that TurboFan has optimized it before anything is timed. Without it, a short run
// spends a good part of its time in unoptimized code, and how much differs from run to run.
const { implementation } = require('../support/implementations');
const { createControl, controlWords } = require('../support/control');

const WARM_UP_MS = 30;

// Calls fn(privateLock, privateControl) repeatedly for WARM_UP_MS.
function warmUp(impl, fn) {
  const { create, openSync } = implementation(impl);
  const lock = openSync(create());
  const ctl = controlWords(createControl());
  const until = Date.now() + WARM_UP_MS;
  while (Date.now() < until) fn(lock, ctl);
}

module.exports = { warmUp };
