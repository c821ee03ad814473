'use strict';
// A worker that uses only the Promise form of the lock: `iterations` times, alternately
// `await lockAsync()` + unlock and `await executeLocked(fn)`, each incrementing the protected
// counter. It has no other pending work, so whether it survives depends on the lock keeping its
// event loop alive while it waits (parklock does; a pending Atomics.waitAsync does not).
const { workerData } = require('node:worker_threads');
const { implementation } = require('../support/implementations');
const { CONTROL, controlWords } = require('../support/control');
const { waitAtGate, reportDone, runWorker } = require('./common');

const { impl, lockShared, control, iterations } = workerData;
const { COUNTER } = CONTROL;

runWorker(async () => {
  const lock = implementation(impl).openAsync(lockShared);
  const ctl = controlWords(control);
  const increment = () => {
    ctl[COUNTER] = ctl[COUNTER] + 1;
  };
  waitAtGate(ctl);
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) {
    if (i % 2 === 0) {
      const token = await lock.lockAsync();
      increment();
      lock.unlock(token);
    } else {
      await lock.executeLocked(increment);
    }
  }
  reportDone({ ops: iterations, start, end: process.hrtime.bigint() });
});
