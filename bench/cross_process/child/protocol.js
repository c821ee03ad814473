'use strict';
// What every child mode shares: the start handshake with the parent (ready, then wait for go),
// the region the parent created, and noticing that the parent is gone.
const { sharedMemory } = require('../../../lib');

function nextMessage(type) {
  return new Promise((resolve) => {
    const listener = (message) => {
      if (!message || message.type !== type) return;
      process.off('message', listener);
      resolve(message);
    };
    process.on('message', listener);
  });
}

// The listener for 'go' is in place before 'ready' goes out: the parent may answer at once.
async function readyThenGo() {
  const go = nextMessage('go');
  process.send({ type: 'ready' });
  await go;
}

function openRegion(spec) {
  return sharedMemory(spec.region, { create: false });
}

// For a synchronous loop, which never yields to hear 'disconnect' (see main.js): true once the
// process that started this one is gone (this one was re-parented). Costs a getppid(2): call it
// every thousand turns or so, not on every one.
const startedBy = process.ppid;
const orphaned = () => process.ppid !== startedBy;

module.exports = { readyThenGo, openRegion, orphaned };
