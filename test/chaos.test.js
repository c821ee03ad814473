'use strict';
// Chaos: workers hammer every primitive (blocking, timed and Promise waits, aborts) while the
// test terminates them at random and some end themselves holding locks. Afterwards nothing is
// left queued, every lock is free or reports its ended owner, and no permit is created or lost
// beyond what the ended threads held.
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { Worker } = require('node:worker_threads');
const { Mutex, RWLock, Semaphore, Condition, OwnerDiedError } = require('../lib');
const native = require('../lib/native');
const { fixture, waitFor, withinLimit, exitIfKeptAlive } = require('./helpers');

exitIfKeptAlive();

const WORKERS = 4;
const DURATION_MS = 15_000;
const PERMITS = 3;

const wordOf = (primitive) => new Int32Array(primitive.buffer, primitive.byteOffset, 1);

// Takes `lock` now, with `take`, accepting the report of an ended owner; returns the guard.
function takeReportingDeath(take) {
  try {
    return { guard: take(), ownerDied: false };
  } catch (error) {
    assert.ok(error instanceof OwnerDiedError, `unexpected ${error}`);
    return { guard: error.guard, ownerDied: true };
  }
}

describe('chaos', () => {
  it(`random terminations of ${WORKERS} workers hammering every primitive leave nothing stuck`, { timeout: 120_000 }, async () => {
    const shared = {
      mutex: new Mutex(),
      rw: new RWLock(),
      semaphore: new Semaphore(PERMITS),
      condition: new Condition(),
      pair: new SharedArrayBuffer(8),
      word: new SharedArrayBuffer(4),
      slots: new SharedArrayBuffer(4 * WORKERS * 1000),
    };
    const pair = new Int32Array(shared.pair);
    let started = 0;
    let ended = 0;
    const live = new Set();
    const start = () => {
      const index = started++;
      const worker = new Worker(fixture('chaos_worker.js'), { workerData: { ...shared, index } });
      worker.on('error', (error) => {
        throw error;
      });
      const running = new Promise((resolve) => worker.once('message', resolve));
      worker.once('exit', () => {
        live.delete(worker);
        ended++;
      });
      live.add(worker);
      return running;
    };

    await Promise.all(Array.from({ length: WORKERS }, start));
    const until = Date.now() + DURATION_MS;
    while (Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 200));
      const victims = [...live];
      if (victims.length > 0 && Math.random() < 0.8) {
        await withinLimit(victims[Math.floor(Math.random() * victims.length)].terminate(), 'terminate()');
      }
      while (live.size < WORKERS) await withinLimit(start(), 'a worker to start');
    }
    await withinLimit(Promise.all([...live].map((worker) => worker.terminate())), 'the last terminations');
    assert.ok(ended >= WORKERS, `${ended} workers ended`);

    // Nothing is left queued: every ended thread's waiters left the parking lot.
    for (const primitive of [shared.mutex, shared.rw, shared.semaphore, shared.condition]) {
      await waitFor(() => native.queuedCount(wordOf(primitive), 0) === 0, 'no waiter left');
    }
    assert.equal(native.queuedCount(new Int32Array(shared.word), 0), 0);

    // Every lock is free, or reports the ended owner that holds it.
    const mutexHold = takeReportingDeath(() => shared.mutex.lock());
    if (mutexHold.ownerDied) pair[1] = pair[0];
    assert.equal(pair[0], pair[1], 'the counters the mutex guards are consistent');
    mutexHold.guard.unlock();
    assert.equal(Atomics.load(wordOf(shared.mutex), 0), 0);
    takeReportingDeath(() => shared.rw.lock()).guard.unlock();
    assert.equal(shared.rw.isLocked, false);

    // Permits: none created; at most one lost per ended worker that held one.
    const slots = new Int32Array(shared.slots);
    const heldByEnded = slots.reduce((sum, held) => sum + held, 0);
    const available = shared.semaphore.available;
    assert.ok(available <= PERMITS, `no permit created (${available} available)`);
    assert.ok(available >= PERMITS - heldByEnded - 1, `${available} available, ${heldByEnded} held by ended workers`);
  });
});
