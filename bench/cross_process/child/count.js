'use strict';
// Child mode "count", one throughput contender: increments the shared counter under the lock
// until the parent sets the stop word, then reports how many times it did and when it started
// and ended. The parent checks that the counter equals the sum of the reports.
const fs = require('node:fs');
const { Mutex, LockManager } = require('../../../lib');
const { SLOT } = require('../layout');
const { readyThenGo, openRegion, orphaned } = require('./protocol');

const PROPER_LOCKFILE_OPTIONS = { retries: { retries: 1000, minTimeout: 1, maxTimeout: 20 }, stale: 10000 };
// Acquisitions between two orphan checks in the synchronous loops (a power of 2 minus 1: a mask).
const ORPHAN_CHECK_MASK = 1023;

// A synchronous loop: the critical section is the same for every lock, a plain read and a plain
// write of the counter, which lose increments if two processes are ever inside at once. It stops
// on the stop word, or, should the parent have died without setting it, by itself.
function syncLoop(lock, unlock, counter) {
  return (stop) => {
    let ops = 0;
    while (Atomics.load(stop, 0) === 0) {
      lock();
      counter[0] += 1;
      unlock();
      if ((++ops & ORPHAN_CHECK_MASK) === 0 && orphaned()) process.exit(1);
    }
    return ops;
  };
}

const LOOPS = {
  parklock(spec, memory) {
    const mutex = new Mutex(memory, spec.slice + SLOT.LOCK);
    const counter = new Int32Array(memory.buffer, spec.slice + SLOT.COUNTER, 1);
    return syncLoop(() => mutex.lock(), () => mutex.unlock(), counter);
  },
  flock(spec, memory) {
    const { flockSync } = require(spec.module);
    const fd = fs.openSync(spec.lockFile, 'r+');
    const counter = new Int32Array(memory.buffer, spec.slice + SLOT.COUNTER, 1);
    return syncLoop(() => flockSync(fd, 'ex'), () => flockSync(fd, 'un'), counter);
  },
  // A name of a LockManager whose table is the file spec.lockFile (bench/named_locks.js): the
  // blocking lock() and its guard's unlock().
  'named-lock'(spec, memory) {
    const manager = new LockManager(spec.lockFile);
    const counter = new Int32Array(memory.buffer, spec.slice + SLOT.COUNTER, 1);
    let guard;
    return syncLoop(() => {
      guard = manager.lock('counter');
    }, () => guard.unlock(), counter);
  },
  // The same name through the Web Locks request(), awaited.
  'named-request'(spec, memory) {
    const manager = new LockManager(spec.lockFile);
    const counter = new Int32Array(memory.buffer, spec.slice + SLOT.COUNTER, 1);
    const increment = () => {
      counter[0] += 1;
    };
    return async (stop) => {
      let ops = 0;
      while (Atomics.load(stop, 0) === 0) {
        await manager.request('counter', increment);
        ops++;
      }
      return ops;
    };
  },
  // The counter lives in the locked file itself: what proper-lockfile is for. The loop awaits,
  // so it hears 'disconnect' and needs no orphan check.
  'proper-lockfile'(spec) {
    const lockfile = require(spec.module);
    return async (stop) => {
      let ops = 0;
      while (Atomics.load(stop, 0) === 0) {
        const release = await lockfile.lock(spec.counterFile, PROPER_LOCKFILE_OPTIONS);
        const count = Number(fs.readFileSync(spec.counterFile, 'utf8'));
        fs.writeFileSync(spec.counterFile, String(count + 1));
        await release();
        ops++;
      }
      return ops;
    };
  },
};

async function count(spec) {
  const memory = openRegion(spec);
  const stop = new Int32Array(memory.buffer, spec.slice + SLOT.STOP, 1);
  const loop = LOOPS[spec.impl](spec, memory);
  await readyThenGo();
  const start = Number(process.hrtime.bigint());
  const ops = await loop(stop);
  return { ops, start, end: Number(process.hrtime.bigint()) };
}

module.exports = { count };
