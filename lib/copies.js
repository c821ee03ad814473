'use strict';
// Several copies of lib/ in one environment: a module re-evaluated after its require.cache entries
// were deleted, or a test runner's fresh module registry per test file. Every copy gets the same
// exports object of the addon (Node caches the .node file) and so the environment's one thread
// context, which the first copy initialises; later copies only read its result. Nothing needs
// routing between copies: the addon settles a wait by calling the record it was started with,
// which belongs to the copy that started it.
const { threadId: nodeThreadId } = require('node:worker_threads');

const THREAD_ID = Symbol.for('parklock.threadId');

// Initialises the addon for this environment, once; returns this thread's parklock id.
function joinEnvironment(native, onSettle, probe) {
  if (native[THREAD_ID] === undefined) {
    Object.defineProperty(native, THREAD_ID, { value: native.init(onSettle, probe, nodeThreadId) });
  }
  return native[THREAD_ID];
}

module.exports = { joinEnvironment };
