'use strict';
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { Worker } = require('node:worker_threads');
const { futex } = require('../lib');
const native = require('../lib/native');
const { fixture, waitFor, withinLimit, tick } = require('./helpers');

const shared = (n = 1) => new Int32Array(new SharedArrayBuffer(4 * n));

describe('futex.wait()', () => {
  it("returns 'not-equal' at once and 'timed-out' after the timeout", () => {
    const a = shared();
    assert.equal(futex.wait(a, 0, 1), 'not-equal');
    assert.equal(futex.wait(a, 0, 0, 5), 'timed-out');
    assert.equal(native.queuedCount(a, 0), 0);
  });

  it("returns 'ok' when another thread notifies", async () => {
    const a = shared(2);
    const worker = new Worker(
      `const { workerData } = require('node:worker_threads');
       const { futex } = require(${JSON.stringify(require.resolve('../lib'))});
       const a = workerData;
       while (futex.notify(a, 0) === 0) Atomics.wait(a, 1, 0, 1);`,
      { eval: true, workerData: a },
    );
    assert.equal(futex.wait(a, 0, 0, 10_000), 'ok');
    await new Promise((resolve) => worker.once('exit', resolve));
  });

  it('a worker blocked in wait() is released by terminate() and leaves the queue', async () => {
    const a = shared();
    const worker = new Worker(fixture('blocked_waiter.js'), { workerData: { kind: 'futex', memory: a.buffer } });
    await new Promise((resolve) => worker.once('message', resolve));
    await waitFor(() => native.queuedCount(a, 0) === 1, 'the worker parked');
    const started = Date.now();
    await withinLimit(worker.terminate(), 'terminate()');
    assert.ok(Date.now() - started < 2000);
    assert.equal(native.queuedCount(a, 0), 0);
  });

  it('rejects bad input with codes', () => {
    const a = shared();
    assert.throws(() => futex.wait(new Int32Array(4), 0, 0), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => futex.wait(new Uint32Array(new SharedArrayBuffer(4)), 0, 0), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => futex.wait(a, 1, 0), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => futex.wait(a, -1, 0), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => futex.wait(a, 0.5, 0), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => futex.wait(a, '0', 0), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => futex.wait(a, 0, '0'), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => futex.wait(a, 0, 0, NaN), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => futex.wait(a, 0, 0, -1), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => futex.notify(a, 0, -1), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => futex.notify(a, 0, 'all'), { code: 'ERR_INVALID_ARG_TYPE' });
  });

  it('waitAsync rejects bad input with codes, never throwing', async () => {
    const a = shared();
    await assert.rejects(futex.waitAsync(new Int32Array(4), 0, 0), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    await assert.rejects(futex.waitAsync(a, 1, 0), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
    await assert.rejects(futex.waitAsync(a, '0', 0), { code: 'ERR_INVALID_ARG_TYPE' });
    await assert.rejects(futex.waitAsync(a, 0, '0'), { code: 'ERR_INVALID_ARG_TYPE' });
    await assert.rejects(futex.waitAsync(a, 0, 0, { timeout: NaN }), { code: 'ERR_OUT_OF_RANGE' });
    await assert.rejects(futex.waitAsync(a, 0, 0, 5), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.equal(native.queuedCount(a, 0), 0);
  });
});

describe('futex.waitAsync()', () => {
  it("resolves 'ok' on notify, in FIFO order for partial notifies", async () => {
    const a = shared();
    const order = [];
    const waits = [0, 1, 2].map((i) => futex.waitAsync(a, 0, 0).then((r) => order.push([i, r])));
    assert.equal(native.queuedCount(a, 0), 3);
    assert.equal(futex.notify(a, 0, 1), 1);
    // The settlement reaches this thread's event loop after a delay that emulators stretch well
    // past a few ms; then a while more, in which no other waiter may be woken.
    await waitFor(() => order.length > 0, 'the first waiter');
    await tick(5);
    assert.deepEqual(order, [[0, 'ok']]);
    assert.equal(futex.notify(a, 0), 2);
    await Promise.all(waits);
    assert.deepEqual(order, [[0, 'ok'], [1, 'ok'], [2, 'ok']]);
  });

  it("resolves 'not-equal' and 'timed-out', and rejects on abort, leaving no waiter", async () => {
    const a = shared();
    assert.equal(await futex.waitAsync(a, 0, 3), 'not-equal');
    assert.equal(await futex.waitAsync(a, 0, 0, { timeout: 2 }), 'timed-out');
    const controller = new AbortController();
    const waiting = futex.waitAsync(a, 0, 0, { signal: controller.signal });
    controller.abort(new Error('enough'));
    await assert.rejects(waiting, /enough/);
    assert.equal(native.queuedCount(a, 0), 0);
    assert.equal(futex.notify(a, 0), 0, 'Atomics.notify-style count of nobody');
  });

  it('keeps a worker alive while it waits, unlike Atomics.waitAsync', async () => {
    const a = shared(2);
    const worker = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       const { futex } = require(${JSON.stringify(require.resolve('../lib'))});
       futex.waitAsync(workerData, 0, 0).then((r) => parentPort.postMessage(r));
       parentPort.postMessage('waiting');`,
      { eval: true, workerData: a },
    );
    const messages = [];
    worker.on('message', (m) => messages.push(m));
    await waitFor(() => native.queuedCount(a, 0) === 1, 'the worker waits');
    await tick(50);
    assert.equal(futex.notify(a, 0), 1, 'the worker was still alive and waiting');
    await new Promise((resolve) => worker.once('exit', resolve));
    assert.deepEqual(messages, ['waiting', 'ok']);
  });

  it('is not woken by Atomics.notify (separate waiter lists)', async () => {
    const a = shared();
    const waiting = futex.waitAsync(a, 0, 0, { timeout: 20 });
    assert.equal(Atomics.notify(a, 0), 0);
    assert.equal(await waiting, 'timed-out');
  });
});

describe('futex on another primitive’s word', () => {
  const { Mutex, Semaphore, RWLock } = require('../lib');
  const wordOf = (primitive) => new Int32Array(primitive.buffer, primitive.byteOffset, 1);

  it('notify() never wakes a Semaphore, RWLock or Mutex waiter, nor grants anything', async () => {
    const semaphore = new Semaphore(0);
    const acquiring = semaphore.acquireAsync(1);
    const rw = new RWLock();
    const writer = rw.lock();
    const reading = rw.lockSharedAsync();
    const mutex = new Mutex();
    const held = mutex.lock();
    const locking = mutex.lockAsync();
    for (const primitive of [semaphore, rw, mutex]) {
      assert.equal(futex.notify(wordOf(primitive), 0), 0, 'a futex notify finds no futex waiter');
    }
    await tick(5);
    assert.equal(semaphore.available, 0, 'no permit created from nothing');
    assert.equal(rw.isWriteLocked, true, 'the write lock still stands');
    assert.equal(rw.readers, 0, 'no read lock created from nothing');
    assert.equal(native.queuedCount(wordOf(semaphore), 0), 1);
    assert.equal(native.queuedCount(wordOf(rw), 0), 1);
    assert.equal(native.queuedCount(wordOf(mutex), 0), 1);

    semaphore.release(1);
    await withinLimit(acquiring, 'the semaphore waiter');
    writer.unlock();
    (await withinLimit(reading, 'the RWLock waiter')).unlock();
    held.unlock();
    (await withinLimit(locking, 'the Mutex waiter')).unlock();
  });

  it('a futex waiter on an RWLock’s word does not stand in its queue', async () => {
    const rw = new RWLock();
    const writer = rw.lock();
    const state = Atomics.load(wordOf(rw), 0);
    const futexWait = futex.waitAsync(wordOf(rw), 0, state, { timeout: 200 });
    const reading = rw.lockSharedAsync();
    writer.unlock();
    // The reader is granted at once, not held up behind the futex waiter.
    const guard = await withinLimit(reading, 'the read lock');
    guard.unlock();
    // Nobody futex-notified it: the lock's own release does not wake a futex waiter either.
    assert.equal(await futexWait, 'timed-out');
  });
});
