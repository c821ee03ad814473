'use strict';
// Several copies of lib/ in one environment: a module re-evaluated after its require.cache entries
// were deleted, or a test runner's fresh module registry per test file. Every copy gets the same
// exports object of the addon (Node caches the .node file) and so the environment's one thread
// context, which settles every wait through the function given to its first init() and ignores
// later ones. That function is this router, kept on the addon's exports: wait ids come from one
// counter for all copies (the addon keys pending waits by id), and each settlement goes to the copy
// that started the wait.
const { threadId: nodeThreadId } = require('node:worker_threads');

const ROUTER = Symbol.for('parklock.settlementRouter');

function routerOf(native, probe) {
  if (native[ROUTER] !== undefined) return native[ROUTER];
  const copies = [];
  const route = (id, settlement) => {
    for (const settle of copies) if (settle(id, settlement)) return;
  };
  const router = { copies, nextId: 1, threadId: native.init(route, probe, nodeThreadId) };
  Object.defineProperty(native, ROUTER, { value: router });
  return router;
}

// Joins this copy to the environment's router. `onSettle(id, settlement)` must return whether the
// wait `id` is this copy's. Returns this thread's id and the function that allocates wait ids.
function joinCopies(native, onSettle, probe) {
  const router = routerOf(native, probe);
  router.copies.push(onSettle);
  return { threadId: router.threadId, newWaitId: () => router.nextId++ };
}

module.exports = { joinCopies };
