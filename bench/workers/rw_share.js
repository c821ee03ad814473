'use strict';
// One participant of the writer-share scenario: the writer, or one of the readers, of one
// reader-writer lock (parklock's RWLock or the hand-written baseline), with the lock's blocking
// forms, until the coordinator sets STOP. A reader holds the lock about 2 µs each time and takes it
// again at once, so on a machine with fewer cores than readers some reader nearly always holds
// it; the writer's section only increments the protected counter. Reports its operations and, for
// the writer, its longest wait.
const { workerData } = require('node:worker_threads');
const { CONTROL, controlWords } = require('../support/control');
const { busyWork } = require('../support/work');
const { waitAtGate, reportDone, runWorker } = require('./common');
const { openRwLock } = require('../support/rw_share');

const { impl, lockShared, control, role, steps } = workerData;
const { COUNTER, STOP } = CONTROL;

async function main() {
  const lock = openRwLock(impl, lockShared);
  const ctl = controlWords(control);
  waitAtGate(ctl);
  let ops = 0;
  let longestWaitMs = 0;
  let sink = 0;
  while (Atomics.load(ctl, STOP) === 0) {
    if (role === 'writer') {
      const asked = performance.now();
      lock.lock();
      longestWaitMs = Math.max(longestWaitMs, performance.now() - asked);
      ctl[COUNTER] = ctl[COUNTER] + 1;
      lock.unlock();
    } else {
      lock.lockShared();
      sink = busyWork(steps, sink);
      lock.unlockShared();
    }
    ops++;
  }
  reportDone({ role, ops, longestWaitMs, sink });
}

runWorker(main);
