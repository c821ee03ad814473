'use strict';
// The priming of a thread's contended paths (lib/prime.js): the first Mutex, RWLock, Semaphore
// and Condition a thread constructs run their slow paths on private instances first. Each test
// runs in a fresh worker, since the main thread of the test runner has primed long ago.
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { Mutex, RWLock, Semaphore, Condition } = require('../lib');
const { withinLimit } = require('./helpers');

const LIB = path.join(__dirname, '..', 'lib');

// Runs `body` (the source of an async function of (lib, data)) in a fresh worker that has not
// loaded parklock yet; resolves with what it returns.
function inFreshWorker(body, data) {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    (${body})(workerData.lib, workerData.data).then(
      (result) => parentPort.postMessage({ result }),
      (error) => parentPort.postMessage({ error: { message: error.message, code: error.code } }),
    );`;
  const worker = new Worker(source, { eval: true, workerData: { lib: LIB, data } });
  const outcome = new Promise((resolve, reject) => {
    worker.once('message', ({ result, error }) => {
      if (error) reject(Object.assign(new Error(error.message), { code: error.code }));
      else resolve(result);
    });
    worker.once('error', reject);
  });
  return withinLimit(outcome, 'the fresh worker').finally(() => worker.terminate());
}

// The words of a primitive, as numbers.
function wordsOf(primitive, count) {
  return Array.from(new Int32Array(primitive.buffer, primitive.byteOffset, count));
}

describe('priming of the contended paths', () => {
  it("leaves the thread's own instances, and everything else, untouched", async () => {
    const mutex = new Mutex();
    const lock = new RWLock();
    const semaphore = new Semaphore(3);
    const condition = new Condition();
    const mutexGuard = mutex.lock();
    const readGuard = lock.lockShared();
    const before = {
      mutex: wordsOf(mutex, 1),
      lock: wordsOf(lock, 2),
      semaphore: wordsOf(semaphore, 1),
      condition: wordsOf(condition, 1),
    };

    const seen = await inFreshWorker(
      `async (lib, shared) => {
        const { Mutex, RWLock, Semaphore, Condition, inspect } = require(lib);
        const words = (p, n) => Array.from(new Int32Array(p.buffer, p.byteOffset, n));
        const mutex = new Mutex(shared.mutex);
        const lock = new RWLock(shared.lock);
        const semaphore = new Semaphore(shared.semaphore);
        const condition = new Condition(shared.condition);
        return {
          words: {
            mutex: words(mutex, 1),
            lock: words(lock, 2),
            semaphore: words(semaphore, 1),
            condition: words(condition, 1),
          },
          waiting: [mutex, lock, semaphore, condition].map((p) => p.waiting),
          inspected: inspect().length,
          held: [mutex.isHeldByCurrentThread, lock.isWriteLockedByCurrentThread],
        };
      }`,
      {
        mutex: { buffer: mutex.buffer, byteOffset: mutex.byteOffset },
        lock: { buffer: lock.buffer, byteOffset: lock.byteOffset },
        semaphore: { buffer: semaphore.buffer, byteOffset: semaphore.byteOffset },
        condition: { buffer: condition.buffer, byteOffset: condition.byteOffset },
      },
    );

    assert.deepEqual(seen.words, before, 'the words seen by the worker');
    assert.deepEqual(seen.waiting, [0, 0, 0, 0]);
    assert.equal(seen.inspected, 0, 'nothing of the priming is left queued');
    assert.deepEqual(seen.held, [false, false]);
    assert.deepEqual(wordsOf(mutex, 1), before.mutex);
    assert.deepEqual(wordsOf(lock, 2), before.lock);
    assert.equal(semaphore.available, 3);
    mutexGuard.unlock();
    readGuard.unlock();
  });

  for (const subscribeFirst of [true, false]) {
    it(`publishes no diagnostics_channel event (subscriber ${subscribeFirst ? 'before' : 'after'} the first construction)`, async () => {
      const events = await inFreshWorker(
        `async (lib, { subscribeFirst }) => {
          const dc = require('node:diagnostics_channel');
          const seen = [];
          const subscribe = () => {
            dc.subscribe('parklock:wait:start', (event) => seen.push('start ' + event.primitive));
            dc.subscribe('parklock:wait:end', (event) => seen.push('end ' + event.primitive));
          };
          const { Mutex, RWLock, Semaphore, Condition } = require(lib);
          const constructAll = () => [new Mutex(), new RWLock(), new Semaphore(), new Condition()];
          if (subscribeFirst) subscribe();
          constructAll();
          if (!subscribeFirst) subscribe();
          constructAll();
          return seen;
        }`,
        { subscribeFirst },
      );
      assert.deepEqual(events, []);
    });
  }

  it('keeps every refusal and its message, and a refusal is not published as a wait', async () => {
    const refusals = await inFreshWorker(
      `async (lib) => {
        const dc = require('node:diagnostics_channel');
        const { Mutex, RWLock } = require(lib);
        const published = [];
        const codeOf = (fn) => {
          try {
            fn();
            return 'no error';
          } catch (error) {
            return error.code + ': ' + error.message;
          }
        };
        const attempt = () => {
          const mutex = new Mutex();
          const lock = new RWLock();
          mutex.lock();
          lock.lock();
          const result = [
            codeOf(() => mutex.lock()),
            codeOf(() => lock.lock()),
            codeOf(() => lock.lockShared()),
            codeOf(() => lock.lockUpgradable()),
          ];
          mutex.unlock();
          lock.unlock();
          result.push(codeOf(() => mutex.unlock()));
          return result;
        };
        const untraced = attempt();
        dc.subscribe('parklock:wait:start', (event) => published.push(event.primitive));
        const traced = attempt();
        return { untraced, traced, published };
      }`,
    );
    const relockedRwlock =
      'ERR_PARKLOCK_DEADLOCK: This thread holds the write lock or the upgradable read lock; ' +
      'this wait would wait for it forever';
    const expected = [
      'ERR_PARKLOCK_DEADLOCK: This thread already holds the mutex; locking it again would wait forever',
      relockedRwlock,
      relockedRwlock,
      relockedRwlock,
      'ERR_PARKLOCK_NOT_OWNER: Cannot unlock a mutex that is not locked',
    ];
    assert.deepEqual(refusals.untraced, expected);
    assert.deepEqual(refusals.traced, expected);
    assert.deepEqual(refusals.published, []);
  });
});
