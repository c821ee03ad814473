'use strict';
// The "bypassed" baseline of the diagnostics-cost scenario: lib/diagnostics.js replaced, for
// this thread only, by a stub that runs a blocking wait directly and never traces a Promise wait.
// That is what the contended paths would cost if the tracing check were not there at all.
//
// lib's modules take their functions out of the diagnostics module once, when they load, so
// replacing its exports later would change nothing: the stub has to sit in require.cache under
// the real module's file name before anything loads lib/. Worker threads have a
// require.cache of their own, so other threads of the process keep the real module.
const Module = require('node:module');

const DIAGNOSTICS = require.resolve('../../lib/diagnostics');

function installBypass() {
  if (require.cache[DIAGNOSTICS]) {
    throw new Error('lib/diagnostics.js is loaded already: install the bypass before lib/ loads');
  }
  const stub = new Module(DIAGNOSTICS, module);
  stub.filename = DIAGNOSTICS;
  stub.loaded = true;
  // Every name lib/diagnostics.js exports, doing nothing: never tracing.
  stub.exports = {
    tracing: () => false,
    traceBlocking: (primitive, wait) => wait(),
    traceBlockingNow: (primitive, wait) => wait(),
    traceQueued: () => undefined,
  };
  require.cache[DIAGNOSTICS] = stub;
  return stub.exports;
}

module.exports = { installBypass };
