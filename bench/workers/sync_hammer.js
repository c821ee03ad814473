'use strict';
// A worker that takes the lock with its blocking form, runs a critical section and releases it,
// in a loop until the coordinator sets STOP; reports how many operations it did and when. An
// implementation with `promiseHammer` is taken with `await lockAsync()` instead.
//
// The critical section depends on how many threads the implementation admits at once (see
// support/implementations.js), plus `steps` of busy work when steps > 0:
//   one        increments the protected counter with a plain read and write (a lost increment
//              shows that two threads were inside)
//   N permits  counts itself in and out of INSIDE and notes every entry that found N already
//              there; increments the counter atomically
//   all        (readers) only reads shared memory, so that nothing but the lock's own word is
//              written by more than one thread and the numbers show how reads scale
const { workerData } = require('node:worker_threads');
const { implementation } = require('../support/implementations');
const { CONTROL, controlWords, createControl } = require('../support/control');
const { busyWork } = require('../support/work');
const { waitAtGate, reportDone, runWorker } = require('./common');
const { warmUp } = require('./warm_up');

const { impl, lockShared, control, steps, batch } = workerData;
const { COUNTER, SINK, STOP, INSIDE } = CONTROL;
// A semaphore case may name its own permits (support/implementations.js).
const admits = lockShared && lockShared.permits !== undefined ? lockShared.permits
  : implementation(impl).admits;
const { promiseHammer } = implementation(impl);

let overfull = 0;
let readSink = 0;

function exclusiveSection(ctl) {
  ctl[COUNTER] = ctl[COUNTER] + 1;
  // Seeded from shared memory, so the work depends on the previous holder's result.
  if (steps > 0) ctl[SINK] = busyWork(steps, ctl[SINK]);
}

function boundedSection(ctl) {
  if (Atomics.add(ctl, INSIDE, 1) >= admits) overfull++;
  Atomics.add(ctl, COUNTER, 1);
  if (steps > 0) ctl[SINK] = busyWork(steps, ctl[SINK]);
  Atomics.sub(ctl, INSIDE, 1);
}

function readSection(ctl) {
  readSink = busyWork(steps, readSink ^ ctl[SINK]);
}

const section = admits === undefined ? exclusiveSection : admits === 'all' ? readSection : boundedSection;

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

async function lockAsyncBatch(lock, ctl) {
  for (let i = 0; i < batch; i++) {
    await lock.lockAsync();
    section(ctl);
    lock.unlock();
  }
}

// warmUp() for the Promise form.
async function warmUpAsync() {
  const { create, openSync } = implementation(impl);
  const lock = openSync(create());
  const ctl = controlWords(createControl());
  const until = Date.now() + 30;
  while (Date.now() < until) await lockAsyncBatch(lock, ctl);
}

async function runAsync(lock, ctl) {
  await warmUpAsync();
  overfull = 0;
  waitAtGate(ctl);
  const start = process.hrtime.bigint();
  let ops = 0;
  while (Atomics.load(ctl, STOP) === 0) {
    await lockAsyncBatch(lock, ctl);
    ops += batch;
  }
  reportDone({ ops, start, end: process.hrtime.bigint(), overfull, readSink });
}

runWorker(async () => {
  const lock = implementation(impl).openSync(lockShared);
  const ctl = controlWords(control);
  if (promiseHammer) return runAsync(lock, ctl);
  const doBatch = typeof lock.runLocked === 'function' ? runLockedBatch : lockUnlockBatch;
  warmUp(impl, doBatch);
  overfull = 0;

  waitAtGate(ctl);
  const start = process.hrtime.bigint();
  let ops = 0;
  while (Atomics.load(ctl, STOP) === 0) {
    doBatch(lock, ctl);
    ops += batch;
  }
  reportDone({ ops, start, end: process.hrtime.bigint(), overfull, readSink });
});
