'use strict';
// A worker that takes the lock with its blocking form, runs a critical section and releases it,
// in a loop until the coordinator sets STOP; reports how many operations it did and when.
// Critical section: increment the protected counter, plus `steps` of busy work when steps > 0.
const { workerData } = require('node:worker_threads');
const { implementation } = require('../support/implementations');
const { CONTROL, controlWords } = require('../support/control');
const { busyWork } = require('../support/work');
const { waitAtGate, reportDone, runWorker } = require('./common');
const { warmUp } = require('./warm_up');

const { impl, lockShared, control, steps, batch } = workerData;
const { COUNTER, SINK, STOP } = CONTROL;

function tinySection(ctl) {
  ctl[COUNTER] = ctl[COUNTER] + 1;
}

function workSection(ctl) {
  ctl[COUNTER] = ctl[COUNTER] + 1;
  // Seeded from shared memory, so the work depends on the previous holder's result.
  ctl[SINK] = busyWork(steps, ctl[SINK]);
}

const section = steps > 0 ? workSection : tinySection;

function lockUnlockBatch(lock, ctl) {
  for (let i = 0; i < batch; i++) {
    lock.lock();
    section(ctl);
    lock.unlock();
  }
}

// Atomics.Mutex has only the callback-scoped form. The callback is made once per control
// buffer (warm-up, then the real one), not once per operation.
let runnerCtl;
let runner;
function runLockedBatch(lock, ctl) {
  if (runnerCtl !== ctl) {
    runnerCtl = ctl;
    runner = () => section(ctl);
  }
  for (let i = 0; i < batch; i++) lock.runLocked(runner);
}

runWorker(async () => {
  const lock = implementation(impl).openSync(lockShared);
  const ctl = controlWords(control);
  const doBatch = typeof lock.runLocked === 'function' ? runLockedBatch : lockUnlockBatch;
  warmUp(impl, doBatch);

  waitAtGate(ctl);
  const start = process.hrtime.bigint();
  let ops = 0;
  while (Atomics.load(ctl, STOP) === 0) {
    doBatch(lock, ctl);
    ops += batch;
  }
  reportDone({ ops, start, end: process.hrtime.bigint() });
});
