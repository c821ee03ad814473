'use strict';
// A worker pool (Piscina) whose workers contend for a Mutex is destroyed under load, which
// terminates workers mid-wait and mid-critical-section: nothing is left stuck. The mutex is free
// or reports its ended owner, and nobody is left queued.
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { Piscina } = require('piscina');
const { Mutex, OwnerDiedError } = require('../lib');
const { fixture, queued, waitFor, withinLimit, exitIfKeptAlive } = require('./helpers');

exitIfKeptAlive();

const TRIALS = 10;

describe('a worker pool destroyed under contention', () => {
  it(`pool.destroy() leaves the mutex usable and no waiter queued (${TRIALS} trials)`, { timeout: 120_000 }, async (t) => {
    let reported = 0;
    for (let trial = 0; trial < TRIALS; trial++) {
      const mutex = new Mutex();
      const pair = new SharedArrayBuffer(8);
      const counters = new Int32Array(pair);
      const pool = new Piscina({ filename: fixture('pool_task.js'), minThreads: 4, maxThreads: 4 });
      const tasks = Array.from({ length: 200 }, (_, i) =>
        pool.run({ mutex, pair, useAsync: i % 2 === 0 }).catch(() => false),
      );
      await waitFor(() => counters[0] >= 5 + trial, 'the tasks to get going');
      await withinLimit(pool.destroy(), 'pool.destroy()');
      await withinLimit(Promise.all(tasks), 'every task to settle');

      await waitFor(() => queued(mutex) === 0, 'the waiters of the terminated workers to leave');
      let guard;
      try {
        assert.equal(mutex.tryLock(10_000), true, 'the mutex is not stuck');
        guard = { unlock: () => mutex.unlock() };
      } catch (error) {
        assert.ok(error instanceof OwnerDiedError, `unexpected ${error}`);
        reported++;
        counters[1] = counters[0];
        guard = error.guard;
      }
      assert.equal(counters[0], counters[1], 'the guarded counters are consistent (or were repaired)');
      guard.unlock();
      assert.equal(mutex.isLocked, false);
    }
    // Informational: how often destroy() killed a holder (its death was then reported).
    t.diagnostic(`owner deaths reported in ${reported} of ${TRIALS} trials`);
  });
});
