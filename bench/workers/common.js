'use strict';
// What every benchmark worker does around its measured loop.
const { parentPort } = require('node:worker_threads');
const { CONTROL } = require('../support/control');

// Announces this worker at the start gate and blocks until the coordinator opens it, so that all
// workers start their loops together instead of the first one running alone while the others
// are still loading.
function waitAtGate(ctl) {
  Atomics.add(ctl, CONTROL.READY, 1);
  while (Atomics.load(ctl, CONTROL.GO) === 0) Atomics.wait(ctl, CONTROL.GO, 0, 1000);
}

function reportDone(payload) {
  parentPort.postMessage({ type: 'done', ...payload });
}

// Runs the worker's async main; an exception becomes the worker's 'error' event (a failure the
// coordinator reports), never a silent exit.
function runWorker(main) {
  main().catch((error) => {
    setImmediate(() => {
      throw error;
    });
  });
}

module.exports = { waitAtGate, reportDone, runWorker };
