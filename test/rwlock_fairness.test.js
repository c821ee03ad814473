'use strict';
// RWLock fairness with real workers: one writer beside four readers that take the lock again the
// moment they release it. The promise is that a reader arriving after a waiting writer waits for
// it, so the writer waits only for the reads already under way. Measured within each run, on the
// same machine, so that the check holds on a slow or loaded one: by the writer's share of all the
// operations, and against a plain reader-writer lock of Atomics alone that keeps the same promise;
// absolute counts are not asserted.
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { RWLock } = require('../lib');
const { fixture, runWorkers } = require('./helpers');

const READERS = 4;
const RUN_MS = 1000;
const TRIES = 2;

// Runs the writer and the readers on `lock` (an RWLock, or the plain lock's SharedArrayBuffer) for
// RUN_MS; the writer's result, and the reads of each reader.
async function hammer(lock, form) {
  const control = new Int32Array(new SharedArrayBuffer(3 * 4));
  const roles = ['writer', ...Array(READERS).fill('reader')];
  const done = runWorkers(
    fixture('rwlock_fairness.js'),
    roles.map((role) => ({ lock, control: control.buffer, role, form })),
    { limit: RUN_MS + 30_000 },
  );
  // A worker that fails before it is ready fails the run at once rather than leave it waiting.
  let failed;
  done.catch((error) => {
    failed = error;
  });
  // Every worker starts at once, when all are ready, so no side has the lock to itself at first.
  for (let ready = 0; ready < roles.length; ready = Atomics.load(control, 0)) {
    if (failed) throw failed;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  Atomics.store(control, 1, 1);
  Atomics.notify(control, 1);
  await new Promise((resolve) => setTimeout(resolve, RUN_MS));
  Atomics.store(control, 2, 1);
  const [writer, ...readers] = await done;
  return { writes: writer.count, longestWait: writer.longestWait, reads: readers.map((r) => r.count) };
}

// The writer's share of every lock operation in a run.
function writerShare({ writes, reads }) {
  return writes / Math.max(writes + reads.reduce((sum, count) => sum + count, 0), 1);
}

// A writer that waits only for the reads under way takes the lock about once for every round of
// the READERS readers' reads, a share near 1 / (READERS + 1) of the operations, or more where the
// readers are slow to come back; a writer the readers hold off gets a share near 0 (about 0.0001
// was seen). The share is a ratio within one run, so a slow or loaded machine moves it little.
const MIN_SHARE = 1 / (4 * (READERS + 1));
// The plain lock's writes are the other yardstick, in the same try. They vary a lot from run to
// run (its writer takes the lock again at once and can shut its readers out for whole time
// slices, or be shut out itself on a busy machine), so they alone would make a flaky bar.
const MIN_OF_PLAIN = 0.5;

// A blocking RWLock writer passes a try if it has MIN_SHARE of the operations or MIN_OF_PLAIN of
// the plain lock's writes; up to TRIES tries.
async function compare(t) {
  let passed = false;
  const seen = [];
  for (let attempt = 0; attempt < TRIES && !passed; attempt++) {
    const plain = await hammer(new SharedArrayBuffer(2 * 4), 'blocking');
    const rwlock = await hammer(new RWLock(), 'blocking');
    t.diagnostic(`plain: ${JSON.stringify(plain)}; RWLock: ${JSON.stringify(rwlock)}`);
    assert.ok(
      rwlock.reads.every((reads) => reads > 0) && plain.reads.every((reads) => reads > 0),
      'every reader read',
    );
    const share = writerShare(rwlock);
    const ofPlain = rwlock.writes / Math.max(plain.writes, 1);
    seen.push(`share ${share.toFixed(4)}, ${ofPlain.toFixed(3)} of the plain lock's writes`);
    passed = share >= MIN_SHARE || ofPlain >= MIN_OF_PLAIN;
  }
  assert.ok(
    passed,
    `the RWLock's writer had under ${MIN_SHARE} of the operations and under ${MIN_OF_PLAIN} of ` +
      `the plain lock's writes: ${seen.join('; ')}`,
  );
}

describe('RWLock fairness beside readers that keep arriving', () => {
  it('a blocking writer has a fair share of the operations, or half the writes of a plain writer-preferring lock', { timeout: 60_000 }, (t) =>
    compare(t));

  // Each Promise wait goes through the event loop, so no count compares with blocking waits: the
  // writer must only never wait long, that is for more than a small part of the run.
  it('a Promise writer beside Promise readers writes, and never waits long', { timeout: 60_000 }, async (t) => {
    let longest = Infinity;
    for (let attempt = 0; attempt < TRIES && longest >= RUN_MS / 4; attempt++) {
      const rwlock = await hammer(new RWLock(), 'promise');
      t.diagnostic(`RWLock (promise): ${JSON.stringify(rwlock)}`);
      assert.ok(rwlock.writes > 0 && rwlock.reads.every((reads) => reads > 0), 'every worker went on');
      longest = Math.min(longest, rwlock.longestWait);
    }
    assert.ok(longest < RUN_MS / 4, `the writer waited ${longest.toFixed(1)} ms at once`);
  });
});
