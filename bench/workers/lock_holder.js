'use strict';
// Takes the lock, says so (READY), and holds it until the coordinator sets RELEASE: lets the
// coordinating thread pile up waiters behind a lock that some other thread holds.
const { workerData } = require('node:worker_threads');
const { implementation } = require('../support/implementations');
const { CONTROL, controlWords } = require('../support/control');
const { reportDone, runWorker } = require('./common');

const { impl, lockShared, control } = workerData;

runWorker(async () => {
  const lock = implementation(impl).openSync(lockShared);
  const ctl = controlWords(control);
  lock.lock();
  Atomics.store(ctl, CONTROL.READY, 1);
  while (Atomics.load(ctl, CONTROL.RELEASE) === 0) Atomics.wait(ctl, CONTROL.RELEASE, 0, 1000);
  lock.unlock();
  reportDone({});
});
