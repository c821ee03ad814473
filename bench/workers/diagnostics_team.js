'use strict';
// A worker of one team of the diagnostics-cost scenario (scenarios/diagnostics_cost.js). Every
// team runs the same workload; what differs is the state of parklock's wait tracing in the
// worker, fixed before lib/ loads and never changed afterwards:
//   none        nobody subscribes to the parklock:wait channels
//   subscribed  a subscriber on both channels; it counts the contended waits
//   bypassed    the tracing code stubbed out (./diagnostics_bypass.js)
// Workloads (each op increments the protected counter):
//   blocking-wait   futex.wait() on a word that holds the expected value, with timeout 0: enters
//                   the addon and times out at once, one traced blocking wait per op
//   sync-contended  lock()/unlock() of a Mutex that the team's other worker hammers too
//   async-handoff   lock(), lockAsync() (queued behind this thread's own hold), unlock(), await
//                   it, unlock(): one Promise wait queued in the addon per op
//   trace-call      diagnostics.traceBlocking('mutex', wait) around a wait that returns at once
// Round r starts when the coordinator raises GO to r and ends when it raises STOP to r.
const { workerData, parentPort } = require('node:worker_threads');
const { installBypass } = require('./diagnostics_bypass');

const { mode, workload, lockShared, control, rounds, batch } = workerData;
// First of all: lib/ must find the stub when it loads.
const stub = mode === 'bypassed' ? installBypass() : null;

const dc = require('node:diagnostics_channel');
const { Mutex, futex } = require('../../lib');
const diagnostics = require('../../lib/diagnostics');
const { settled } = require('../../lib/native');
const { CONTROL, controlWords } = require('../support/control');
const { reportDone, runWorker } = require('./common');

const { READY, GO, STOP, COUNTER } = CONTROL;
const START = 'parklock:wait:start';
const END = 'parklock:wait:end';

let waits = 0;
const countWait = () => {
  waits++;
};

function blockingWait(ctl) {
  const word = new Int32Array(lockShared.buffer, lockShared.byteOffset, 1);
  return () => {
    for (let i = 0; i < batch; i++) {
      futex.wait(word, 0, 0, 0);
      ctl[COUNTER] = ctl[COUNTER] + 1;
    }
    return batch;
  };
}

function syncContended(ctl) {
  const mutex = new Mutex(lockShared.buffer, lockShared.byteOffset);
  return () => {
    for (let i = 0; i < batch; i++) {
      mutex.lock();
      ctl[COUNTER] = ctl[COUNTER] + 1;
      mutex.unlock();
    }
    return batch;
  };
}

function asyncHandoff(ctl) {
  const mutex = new Mutex(lockShared.buffer, lockShared.byteOffset);
  return async () => {
    for (let i = 0; i < batch; i++) {
      mutex.lock();
      const waiting = mutex.lockAsync();
      mutex.unlock();
      await waiting;
      ctl[COUNTER] = ctl[COUNTER] + 1;
      mutex.unlock();
    }
    return batch;
  };
}

function traceCall(ctl) {
  const { traceBlocking } = diagnostics;
  const wait = () => {
    ctl[COUNTER] = ctl[COUNTER] + 1;
    return settled.ACQUIRED;
  };
  return () => {
    for (let i = 0; i < batch; i++) traceBlocking('mutex', wait);
    return batch;
  };
}

const WORKLOADS = {
  'blocking-wait': blockingWait,
  'sync-contended': syncContended,
  'async-handoff': asyncHandoff,
  'trace-call': traceCall,
};

function awaitRound(ctl, round) {
  for (let seen; (seen = Atomics.load(ctl, GO)) < round;) Atomics.wait(ctl, GO, seen, 1000);
}

// A round's ops, and the time per op of its fastest batch (ns): for a single thread, what its
// own code costs, since interference from elsewhere only ever adds time. Two loops rather than
// one that awaits every batch: an await per synchronous batch would be timed too.
function syncRound(runBatch, ctl, round) {
  let ops = 0;
  let fastest = Infinity;
  while (Atomics.load(ctl, STOP) < round) {
    const start = process.hrtime.bigint();
    const done = runBatch();
    fastest = Math.min(fastest, Number(process.hrtime.bigint() - start) / done);
    ops += done;
  }
  return { ops, fastest };
}

async function asyncRound(runBatch, ctl, round) {
  let ops = 0;
  let fastest = Infinity;
  while (Atomics.load(ctl, STOP) < round) {
    const start = process.hrtime.bigint();
    const done = await runBatch();
    fastest = Math.min(fastest, Number(process.hrtime.bigint() - start) / done);
    ops += done;
  }
  return { ops, fastest };
}

// After the last round: one queued Promise wait on a private mutex, watched by a subscriber
// added only now. It must be seen unless tracing is bypassed, which shows that the stub, and
// only the stub, took the tracing out.
async function probe() {
  let seen = 0;
  const count = () => {
    seen++;
  };
  dc.subscribe(START, count);
  const mutex = new Mutex();
  mutex.lock();
  const waiting = mutex.lockAsync();
  mutex.unlock();
  await waiting;
  mutex.unlock();
  dc.unsubscribe(START, count);
  return seen;
}

runWorker(async () => {
  if (stub !== null && diagnostics !== stub) throw new Error('the diagnostics stub was not used');
  const ctl = controlWords(control);
  if (mode === 'subscribed') {
    dc.subscribe(START, countWait);
    dc.subscribe(END, () => {});
  }
  const runBatch = WORKLOADS[workload](ctl);
  const runRound = workload === 'async-handoff' ? asyncRound : syncRound;
  Atomics.add(ctl, READY, 1);
  for (let round = 1; round <= rounds; round++) {
    awaitRound(ctl, round);
    const before = waits;
    const start = process.hrtime.bigint();
    const { ops, fastest } = await runRound(runBatch, ctl, round);
    const end = process.hrtime.bigint();
    const report = { type: 'round', round, ops, fastest, waits: waits - before, start, end };
    parentPort.postMessage(report);
  }
  reportDone({ probeWaits: await probe() });
});
