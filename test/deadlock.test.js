'use strict';
// Deadlock detection across workers: a blocking acquisition that closes a cycle of threads, each
// blocked waiting for a lock the next one holds, fails in exactly one of them.
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { Mutex, inspect } = require('../lib');
const { fixture, runWorkers, assertClean } = require('./helpers');

const RING = fixture('deadlock_ring.js');

async function ring(kinds, options = {}) {
  const buffer = new SharedArrayBuffer(64 + kinds.length * 16);
  const results = await runWorkers(
    RING,
    kinds.map((_, index) => ({ buffer, kinds, index, ready: 2, ...options })),
  );
  return { buffer, results };
}

function checkOneGaveUp(results, kinds) {
  const gaveUp = results.filter((r) => !r.acquired);
  assert.equal(gaveUp.length, 1, `exactly one thread gives up: ${JSON.stringify(results)}`);
  const [victim] = gaveUp;
  assert.equal(victim.code, 'ERR_PARKLOCK_DEADLOCK');
  assert.equal(victim.cycle.length, kinds.length);
  assert.equal(victim.cycle[0].threadId, victim.threadId, 'the cycle starts with the thread itself');
  const threads = results.map((r) => r.threadId);
  assert.deepEqual(new Set(victim.cycle.map((step) => step.threadId)), new Set(threads));
  for (const step of victim.cycle) {
    assert.ok(['mutex', 'rwlock'].includes(step.waitsFor.kind));
    assert.equal(typeof step.waitsFor.address, 'string');
  }
  assert.match(victim.message, /deadlock/i);
}

describe('deadlock detection', () => {
  it('two workers locking two mutexes in opposite orders: exactly one gets ERR_PARKLOCK_DEADLOCK', async () => {
    const kinds = ['mutex', 'mutex'];
    const { buffer, results } = await ring(kinds);
    checkOneGaveUp(results, kinds);
    for (let i = 0; i < kinds.length; i++) assertClean(new Mutex(buffer, 64 + i * 16));
  });

  it('a cycle of three workers is found by exactly one of them', async () => {
    const kinds = ['mutex', 'mutex', 'mutex'];
    const { results } = await ring(kinds);
    checkOneGaveUp(results, kinds);
  });

  it('a cycle through an RWLock write lock and a mutex is found', async () => {
    const kinds = ['mutex', 'rwlock'];
    const { results } = await ring(kinds);
    checkOneGaveUp(results, kinds);
  });

  it('timed waits in a cycle report it too, before their timeout', async () => {
    const kinds = ['mutex', 'mutex'];
    const start = performance.now();
    const { results } = await ring(kinds, { timeoutMs: 20_000 });
    checkOneGaveUp(results, kinds);
    assert.ok(performance.now() - start < 10_000);
  });

  it('no false positive under heavy contention in a consistent lock order', async () => {
    const buffer = new SharedArrayBuffer(64);
    const counts = await runWorkers(
      fixture('deadlock_free.js'),
      [0, 1, 2, 3].map(() => ({ buffer, iterations: 50_000 })),
      { limit: 120_000 },
    );
    const total = counts.reduce((sum, r) => sum + r.acquisitions, 0);
    assert.equal(total, 4 * 50_000 * 2);
    assert.equal(new Int32Array(buffer, 32, 1)[0], 4 * 50_000, 'the guarded counter is exact');
    for (const r of counts) assert.equal(r.deadlocks, 0);
  });

  it('inspect() lists nothing once the cycle is broken', async () => {
    await ring(['mutex', 'mutex']);
    assert.deepEqual(
      inspect().filter((entry) => entry.waiters.some((w) => w.blocking)),
      [],
    );
  });
});
