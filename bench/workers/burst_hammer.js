'use strict';
// A worker of the burst scenario: from a cold start (no warm-up, a lock it has never touched),
// takes and releases the lock `count` times, the critical section incrementing the protected
// counter; reports when it started and ended. What a request handler meets: the first
// contended operations of a thread, before anything is optimized or cached.
const { workerData } = require('node:worker_threads');
const { implementation } = require('../support/implementations');
const { CONTROL, controlWords } = require('../support/control');
const { waitAtGate, reportDone, runWorker } = require('./common');

const { impl, lockShared, control, count } = workerData;
const { COUNTER } = CONTROL;

runWorker(async () => {
  const lock = implementation(impl).openSync(lockShared);
  const ctl = controlWords(control);
  const section = () => {
    ctl[COUNTER] = ctl[COUNTER] + 1;
  };
  waitAtGate(ctl);
  const start = process.hrtime.bigint();
  if (typeof lock.runLocked === 'function') {
    for (let i = 0; i < count; i++) lock.runLocked(section);
  } else {
    for (let i = 0; i < count; i++) {
      lock.lock();
      section();
      lock.unlock();
    }
  }
  reportDone({ ops: count, start, end: process.hrtime.bigint() });
});
