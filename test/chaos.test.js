'use strict';
// Chaos: workers hammer every primitive (blocking, timed and Promise waits, aborts) while the
// test terminates them at random and some end themselves holding locks. Afterwards nothing is
// left queued, every lock that records its owner is free or reports its ended owner, and read
// holds and permits are exactly those the ended threads kept (they record no owner: what a dead
// reader or permit holder held stays taken, as docs/worker-death.md says).
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { Worker } = require('node:worker_threads');
const { Mutex, RWLock, Semaphore, Condition, OwnerDiedError } = require('../lib');
const native = require('../lib/native');
const { HANG_LIMIT_MS, fixture, waitFor, withinLimit, exitIfKeptAlive } = require('./helpers');

exitIfKeptAlive();

const WORKERS = 4;
const DURATION_MS = Number(process.env.PARKLOCK_CHAOS_MS) || 15_000;
const PERMITS = 3;

const wordOf = (primitive) => new Int32Array(primitive.buffer, primitive.byteOffset, 1);

// Takes a lock with `take` (a timed try-lock, so that a lock left held fails the test instead of
// blocking this thread forever), accepting the report of an ended owner; returns the guard.
function takeReportingDeath(lock, take) {
  try {
    assert.equal(take(), true, 'the lock is not left held by anybody');
    return { guard: { unlock: () => lock.unlock() }, ownerDied: false };
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
      slots: new SharedArrayBuffer(4 * 2 * 10_000),
    };
    const pair = new Int32Array(shared.pair);
    let started = 0;
    let ended = 0;
    const live = new Set();
    const start = () => {
      const index = started++;
      assert.ok(index < 10_000, 'room for every worker in slots');
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
    const mutexHold = takeReportingDeath(shared.mutex, () => shared.mutex.tryLock(HANG_LIMIT_MS));
    if (mutexHold.ownerDied) pair[1] = pair[0];
    assert.equal(pair[0], pair[1], 'the counters the mutex guards are consistent');
    mutexHold.guard.unlock();
    assert.equal(Atomics.load(wordOf(shared.mutex), 0), 0);
    const slots = new Int32Array(shared.slots);
    const held = (kind) => slots.filter((value, i) => i % 2 === kind && value === 1).length;
    // Read holds: at least those the ended workers recorded, at most one per ended worker.
    const readers = shared.rw.readers;
    assert.ok(readers >= held(1) && readers <= ended, `${readers} read holds, ${held(1)} recorded, ${ended} ended`);
    if (readers === 0) {
      takeReportingDeath(shared.rw, () => shared.rw.tryLock(HANG_LIMIT_MS)).guard.unlock();
      assert.equal(shared.rw.isLocked, false);
    } else {
      // The write lock is not held (not even by an ended writer, which would have been reported).
      assert.equal(shared.rw.isWriteLocked, false);
    }

    // Permits: none created; the missing ones are at least those recorded as held by ended
    // workers, and at most one per ended worker.
    const available = shared.semaphore.available;
    assert.ok(available <= PERMITS - held(0), `${available} available, ${held(0)} held by ended workers`);
    assert.ok(available >= Math.max(0, PERMITS - ended), `${available} available, ${ended} ended`);
  });
});
