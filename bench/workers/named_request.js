'use strict';
// One of the workers contending for one name with awaited exclusive request()s (bench/
// named_locks.js, "workers" cases): parklock's `locks`, or Node's own worker_threads.locks.
// After the start gate it times its first `burst` requests, then keeps requesting until STOP,
// counting the ones made while MEASURE is set (the steady window). Inside each callback it
// increments COUNTER with a plain read and write, and counts itself in and out of INSIDE, so that
// two holders at once show up both as a lost increment and as an overlap.
const { workerData } = require('node:worker_threads');
const { CONTROL } = require('../support/control');
const { waitAtGate, reportDone, runWorker } = require('./common');

const { COUNTER, INSIDE, MEASURE, STOP } = CONTROL;

function lockManagerOf(impl) {
  if (impl === 'node') return require('node:worker_threads').locks;
  return require('../../lib').locks;
}

runWorker(async () => {
  const { impl, control, burst, name } = workerData;
  const ctl = new Int32Array(control);
  const manager = lockManagerOf(impl);
  // Node's worker_threads.locks lets a worker exit while its only pending work is a lock request
  // (the request does not keep the event loop alive): a timer does, for both implementations alike.
  const keepAlive = setInterval(() => {}, 1000);
  let overlaps = 0;
  const critical = () => {
    if (Atomics.add(ctl, INSIDE, 1) !== 0) overlaps++;
    ctl[COUNTER] += 1;
    Atomics.sub(ctl, INSIDE, 1);
  };
  waitAtGate(ctl);
  for (let i = 0; i < burst; i++) await manager.request(name, critical);
  const burstEnd = Number(process.hrtime.bigint());
  let ops = burst;
  let steadyOps = 0;
  while (Atomics.load(ctl, STOP) === 0) {
    await manager.request(name, critical);
    ops++;
    if (Atomics.load(ctl, MEASURE) === 1) steadyOps++;
  }
  clearInterval(keepAlive);
  reportDone({ ops, steadyOps, burstEnd, overlaps });
});
