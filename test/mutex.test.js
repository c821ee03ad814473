'use strict';
// Mutex / AsyncLock on one thread, and with one helper worker (test/fixtures/agent.js) where a
// second thread is needed. The multi-worker stress and termination tests are in
// mutex_workers.test.js.
const { describe, it, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const { Mutex, AsyncLock, Condition, TimeoutError, layouts } = require('../lib');
const { threadId } = require('../lib/async_waits');
const {
  fixture,
  wordOf,
  loadWord,
  queued,
  assertClean,
  tick,
  waitFor,
  withinLimit,
  isSettled,
  testSignal,
  abortTestWaits,
  exitIfKeptAlive,
  agentsPerTest,
} = require('./helpers');

const { LOCKED, LOCKED_PARKED, OWNER_SHIFT } = layouts.mutex;
const HELD_BY_ME = (threadId << OWNER_SHIFT) | LOCKED;
// Owner bits of a thread that is not this one.
const OTHER_OWNER = threadId === 4 ? 5 : 4;

exitIfKeptAlive();

const startAgent = agentsPerTest(fixture('agent.js'), (...mutexes) => ({ mutexes }));
// Contended waits on this thread pass `signal: testSignal()`, so that a wait a bug leaves pending
// is cancelled after its test (instead of keeping the test process alive).
afterEach(abortTestWaits);

const TYPE_ERROR = (code = 'ERR_INVALID_ARG_TYPE') => ({ name: 'TypeError', code });
const RANGE_ERROR = { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' };

describe('construction', () => {
  it('new Mutex() allocates its own zeroed SharedArrayBuffer of Mutex.BYTES', () => {
    const m = new Mutex();
    assert.ok(m.buffer instanceof SharedArrayBuffer);
    assert.equal(m.buffer.byteLength, Mutex.BYTES);
    assert.equal(m.byteOffset, 0);
    assert.equal(m.isLocked, false);
    assert.notEqual(new Mutex().buffer, m.buffer, 'each new Mutex() has its own memory');
    assertClean(m);
  });

  it('AsyncLock is the same class as Mutex', () => {
    assert.equal(AsyncLock, Mutex);
    assert.ok(new AsyncLock() instanceof Mutex);
  });

  it('new Mutex(sab, byteOffset) uses the word at byteOffset and nothing else', () => {
    const sab = new SharedArrayBuffer(16);
    const all = new Int32Array(sab);
    const m = new Mutex(sab, 8);
    assert.equal(m.buffer, sab);
    assert.equal(m.byteOffset, 8);
    const guard = m.lock();
    assert.deepEqual(Array.from(all), [0, 0, HELD_BY_ME, 0]);
    guard.unlock();
    assert.deepEqual(Array.from(all), [0, 0, 0, 0]);
    assertClean(m);
  });

  it('new Mutex(sab) defaults byteOffset to 0', () => {
    const sab = new SharedArrayBuffer(8);
    const m = new Mutex(sab);
    assert.equal(m.byteOffset, 0);
    m.lock();
    assert.deepEqual(Array.from(new Int32Array(sab)), [HELD_BY_ME, 0]);
    m.unlock();
    assertClean(m);
  });

  it('new Mutex({ buffer, byteOffset }) and a structured clone of a Mutex are the same lock', () => {
    const sab = new SharedArrayBuffer(8);
    const a = new Mutex(sab, 4);
    assert.deepEqual(Object.keys(a), ['buffer', 'byteOffset'], 'only the location is enumerable');
    const clone = structuredClone(a);
    assert.equal(Object.getPrototypeOf(clone), Object.prototype);
    assert.equal(clone.byteOffset, 4);
    const b = new Mutex(clone);
    const c = new Mutex({ buffer: sab, byteOffset: 4 });
    const d = new Mutex({ buffer: sab }); // byteOffset defaults to 0: a different lock
    a.lock();
    assert.equal(b.isLocked, true);
    assert.equal(c.isLocked, true);
    assert.equal(d.isLocked, false);
    a.unlock();
    assert.equal(b.isLocked, false);
    for (const m of [a, b, c, d]) assertClean(m);
  });

  it('the location properties cannot be reassigned', () => {
    const m = new Mutex();
    assert.throws(() => {
      m.buffer = new SharedArrayBuffer(4);
    }, TypeError);
    assert.throws(() => {
      m.byteOffset = 4;
    }, TypeError);
    assertClean(m);
  });

  it('two Mutex objects at the same location are the same lock', () => {
    const sab = new SharedArrayBuffer(4);
    const a = new Mutex(sab, 0);
    const b = new Mutex(sab, 0);
    a.lock();
    assert.equal(b.isLocked, true);
    assert.equal(b.isHeldByCurrentThread, true, 'held by this thread, through either object');
    assert.equal(b.tryLock(), false);
    assert.throws(() => b.lock(), { code: 'ERR_PARKLOCK_DEADLOCK' });
    b.unlock(); // the same thread owns it, whichever object it uses
    assert.equal(a.isLocked, false);
    assert.equal(b.tryLock(), true);
    assert.equal(a.isHeldByCurrentThread, true);
    a.unlock();
    assertClean(a);
  });

  it('mutexes at different offsets of one buffer are independent', () => {
    const sab = new SharedArrayBuffer(16);
    const ms = [0, 4, 8, 12].map((offset) => new Mutex(sab, offset));
    ms[0].lock();
    ms[2].lock();
    assert.deepEqual(ms.map((m) => m.isLocked), [true, false, true, false]);
    assert.equal(ms[1].tryLock(), true);
    assert.equal(ms[3].tryLock(), true);
    ms[0].unlock();
    assert.deepEqual(ms.map((m) => m.isLocked), [false, true, true, true]);
    for (const m of ms.slice(1)) m.unlock();
    for (const m of ms) assertClean(m);
  });

  it('a Mutex posted to a worker (workerData and postMessage) is the same lock', { timeout: 30_000 }, async () => {
    const m = new Mutex();
    const agent = await startAgent(m); // mutexes[0]: the Mutex itself, cloned through workerData
    assert.equal(await agent.call('adopt', { location: m }), 1); // mutexes[1]: through postMessage
    assert.equal(await agent.call('isLocked', { m: 0 }), false);

    const guard = m.lock();
    assert.equal(await agent.call('isLocked', { m: 0 }), true);
    assert.equal(await agent.call('isLocked', { m: 1 }), true);
    assert.equal(await agent.call('isHeld', { m: 0 }), false);
    assert.equal(await agent.call('tryLock', { m: 1 }), false);
    guard.unlock();

    // The worker takes it through the posted copy; the main thread sees it held by someone else.
    assert.equal(await agent.call('tryLock', { m: 1 }), true);
    assert.equal(m.isLocked, true);
    assert.equal(m.isHeldByCurrentThread, false);
    assert.equal(loadWord(m), (agent.threadId << OWNER_SHIFT) | LOCKED, 'the owner bits name the worker');
    assert.equal(m.tryLock(), false);
    assert.equal(await agent.call('isHeld', { m: 0 }), true);
    // ...and releases it through the workerData copy.
    await agent.call('unlock', { m: 0 });
    assertClean(m);
  });
});

describe('bad input', () => {
  it('rejects memory that is not a SharedArrayBuffer', () => {
    assert.throws(() => new Mutex(new ArrayBuffer(4)), {
      ...TYPE_ERROR(),
      message: /cannot be shared/,
    });
    for (const value of ['buffer', 0, 4, null, true, Symbol('x'), () => {}]) {
      assert.throws(() => new Mutex(value), TYPE_ERROR(), `new Mutex(${String(value)})`);
    }
    const sab = new SharedArrayBuffer(8);
    for (const view of [new Int32Array(sab), new Uint8Array(sab), new DataView(sab), new Int32Array(2)]) {
      assert.throws(() => new Mutex(view), TYPE_ERROR(), `new Mutex(${view.constructor.name})`);
    }
    assert.deepEqual(Array.from(new Int32Array(sab)), [0, 0]);
  });

  it('rejects a { buffer, byteOffset } record without a SharedArrayBuffer', () => {
    assert.throws(() => new Mutex({}), TYPE_ERROR());
    assert.throws(() => new Mutex({ byteOffset: 0 }), TYPE_ERROR());
    assert.throws(() => new Mutex({ buffer: new ArrayBuffer(4), byteOffset: 0 }), TYPE_ERROR());
    assert.throws(() => new Mutex({ buffer: new Int32Array(new SharedArrayBuffer(4)) }), TYPE_ERROR());
  });

  it('rejects a byteOffset that is not a number', () => {
    const sab = new SharedArrayBuffer(8);
    for (const offset of ['4', null, 4n, {}, [4]]) {
      assert.throws(() => new Mutex(sab, offset), TYPE_ERROR(), `byteOffset ${String(offset)}`);
      assert.throws(() => new Mutex({ buffer: sab, byteOffset: offset }), TYPE_ERROR());
    }
  });

  it('rejects misaligned, negative, non-integer and out-of-range byteOffsets', () => {
    const sab = new SharedArrayBuffer(16);
    for (const offset of [1, 2, 3, 6, -4, -1, 0.5, 4.5, NaN, Infinity, -Infinity, 16, 20, 1024]) {
      assert.throws(() => new Mutex(sab, offset), RANGE_ERROR, `byteOffset ${offset}`);
      assert.throws(() => new Mutex({ buffer: sab, byteOffset: offset }), RANGE_ERROR, `{ byteOffset: ${offset} }`);
    }
    // The last word that fits is accepted; a buffer too small for one word is not.
    assert.equal(new Mutex(sab, 12).byteOffset, 12);
    assert.throws(() => new Mutex(new SharedArrayBuffer(3)), RANGE_ERROR);
    assert.throws(() => new Mutex(new SharedArrayBuffer(0)), RANGE_ERROR);
    assert.throws(() => new Mutex(undefined, 4), RANGE_ERROR, 'its own 4-byte buffer has no offset 4');
    assert.deepEqual(Array.from(new Int32Array(sab)), [0, 0, 0, 0]);
  });

  it('rejects a byteOffset argument beside a { buffer, byteOffset } record', () => {
    const sab = new SharedArrayBuffer(8);
    assert.throws(() => new Mutex({ buffer: sab, byteOffset: 0 }, 4), TYPE_ERROR());
    assert.throws(() => new Mutex({ buffer: sab, byteOffset: 4 }, 4), TYPE_ERROR());
    assert.throws(() => new Mutex(new Mutex(sab, 4), 0), TYPE_ERROR());
  });

  it('tryLock rejects a timeout that is not a non-negative number', () => {
    const m = new Mutex();
    assert.throws(() => m.tryLock(NaN), RANGE_ERROR);
    assert.throws(() => m.tryLock(-1), RANGE_ERROR);
    assert.throws(() => m.tryLock(-Infinity), RANGE_ERROR);
    assert.throws(() => m.tryLock('10'), TYPE_ERROR());
    assert.throws(() => m.tryLock(null), TYPE_ERROR());
    assert.throws(() => m.tryLock(10n), TYPE_ERROR());
    assertClean(m); // a rejected call does not take the lock
  });

  it('lockAsync rejects bad options (never throwing) and does not take the lock', async () => {
    const m = new Mutex();
    for (const options of [null, 5, 'x', true]) {
      await assert.rejects(m.lockAsync(options), TYPE_ERROR(), `options ${String(options)}`);
    }
    for (const timeout of ['5', null, {}]) {
      await assert.rejects(m.lockAsync({ timeout }), TYPE_ERROR(), `timeout ${String(timeout)}`);
    }
    for (const timeout of [-1, NaN, -Infinity]) {
      await assert.rejects(m.lockAsync({ timeout }), RANGE_ERROR, `timeout ${timeout}`);
    }
    for (const signal of [null, {}, 'signal', { aborted: false }, new EventTarget()]) {
      await assert.rejects(m.lockAsync({ signal }), TYPE_ERROR(), `signal ${String(signal)}`);
    }
    assertClean(m);
  });

  it('executeLocked rejects a non-function or bad options without taking the lock or calling fn', async () => {
    const m = new Mutex();
    for (const fn of [undefined, null, 5, 'fn', {}]) {
      // executeLocked is an async function: argument errors come back as a rejected Promise.
      const result = m.executeLocked(fn);
      assert.ok(result instanceof Promise);
      await assert.rejects(result, TYPE_ERROR(), `fn ${String(fn)}`);
    }
    let called = false;
    const fn = () => {
      called = true;
    };
    await assert.rejects(m.executeLocked(fn, 5), TYPE_ERROR());
    await assert.rejects(m.executeLocked(fn, { timeout: -1 }), RANGE_ERROR);
    await assert.rejects(m.executeLocked(fn, { signal: {} }), TYPE_ERROR());
    assert.equal(called, false);
    assertClean(m);
  });

  it('unlock of an unlocked mutex throws ERR_PARKLOCK_NOT_OWNER', () => {
    const m = new Mutex();
    assert.throws(() => m.unlock(), { name: 'Error', code: 'ERR_PARKLOCK_NOT_OWNER' });
    m.lock();
    m.unlock();
    assert.throws(() => m.unlock(), { code: 'ERR_PARKLOCK_NOT_OWNER' }, 'a second unlock is an error');
    assertClean(m);
  });

  it('unlock by a thread that does not hold it throws and leaves the lock held by its owner', { timeout: 30_000 }, async () => {
    const m = new Mutex();
    const agent = await startAgent(m);
    assert.equal(await agent.call('tryLock'), true);
    const held = loadWord(m);
    assert.equal(held, (agent.threadId << OWNER_SHIFT) | LOCKED);

    assert.throws(() => m.unlock(), { name: 'Error', code: 'ERR_PARKLOCK_NOT_OWNER' });
    assert.equal(loadWord(m), held, 'still held by the worker');
    assert.equal(await agent.call('isHeld'), true);

    // Also with a waiter parked (the word's state 2, the native unlock path).
    const waiting = m.lockAsync({ signal: testSignal() });
    assert.equal(queued(m), 1);
    assert.equal(loadWord(m), (agent.threadId << OWNER_SHIFT) | LOCKED_PARKED);
    assert.throws(() => m.unlock(), { code: 'ERR_PARKLOCK_NOT_OWNER' });
    assert.equal(loadWord(m), (agent.threadId << OWNER_SHIFT) | LOCKED_PARKED);
    assert.equal(await isSettled(waiting), false);

    // The owner can still release it, and the waiter gets it.
    await agent.call('unlock');
    const guard = await withinLimit(waiting, 'lockAsync after the worker unlocked');
    assert.equal(m.isHeldByCurrentThread, true);
    guard.unlock();
    assertClean(m);
  });
});

describe('lock, unlock, tryLock', () => {
  it('lock() takes a free mutex and unlock() releases it', () => {
    const m = new Mutex();
    assert.equal(m.isLocked, false);
    assert.equal(m.isHeldByCurrentThread, false);
    const guard = m.lock();
    assert.equal(m.isLocked, true);
    assert.equal(m.isHeldByCurrentThread, true);
    assert.equal(loadWord(m), HELD_BY_ME);
    assert.equal(guard.released, false);
    m.unlock();
    assert.equal(m.isLocked, false);
    assert.equal(m.isHeldByCurrentThread, false);
    assertClean(m);
  });

  it('tryLock() takes a free mutex and returns false while it is held', () => {
    const m = new Mutex();
    assert.equal(m.tryLock(), true);
    assert.equal(m.isHeldByCurrentThread, true);
    assert.equal(m.tryLock(), false, 'tryLock by the holder returns false');
    assert.equal(m.tryLock(0), false);
    assert.equal(m.tryLock(50), false, 'tryLock(timeout) by the holder returns false (does not wait)');
    assert.equal(loadWord(m), HELD_BY_ME, 'the failed attempts did not change the word');
    m.unlock();
    assert.equal(m.tryLock(1000), true);
    m.unlock();
    assertClean(m);
  });

  it('lock() by the holder throws ERR_PARKLOCK_DEADLOCK and keeps the lock held', () => {
    const m = new Mutex();
    m.lock();
    assert.throws(() => m.lock(), { name: 'Error', code: 'ERR_PARKLOCK_DEADLOCK' });
    assert.equal(loadWord(m), HELD_BY_ME);
    m.unlock();
    assertClean(m);
  });

  it('isLocked / isHeldByCurrentThread while another thread holds it', { timeout: 30_000 }, async () => {
    const m = new Mutex();
    const agent = await startAgent(m);
    await agent.call('lock');
    assert.equal(m.isLocked, true);
    assert.equal(m.isHeldByCurrentThread, false);
    assert.equal(await agent.call('isLocked'), true);
    assert.equal(await agent.call('isHeld'), true);
    assert.equal(m.tryLock(), false);
    await agent.call('unlock');
    assert.equal(m.isLocked, false);
    assert.equal(await agent.call('isHeld'), false);
    assertClean(m);
  });

  it('tryLock(timeout) returns false after the timeout while another thread holds it', { timeout: 30_000 }, async () => {
    const m = new Mutex();
    const agent = await startAgent(m);
    await agent.call('lock');
    for (const timeout of [1, 100]) {
      const start = performance.now();
      assert.equal(m.tryLock(timeout), false);
      const elapsed = performance.now() - start;
      // Only a lower bound (load can only make it later); the upper bound just catches a hang.
      assert.ok(elapsed >= timeout - 2, `tryLock(${timeout}) gave up after ${elapsed} ms`);
      assert.ok(elapsed < 5000, `tryLock(${timeout}) took ${elapsed} ms`);
      assert.equal(queued(m), 0, 'the timed-out waiter left the parking lot');
    }
    // The failed waits leave the word held by the worker, so its unlock still works.
    assert.equal(m.isHeldByCurrentThread, false);
    await agent.call('unlock');
    assertClean(m);
  });

  // (The main thread never blocks in lock() here: a lost wake-up would hang the whole test process
  // with no timeout able to fire. Workers block in lock(), with a hang limit, below and in
  // mutex_workers.test.js.)
  it('tryLock(timeout) blocks until another thread releases the mutex', { timeout: 30_000 }, async () => {
    const m = new Mutex();
    const agent = await startAgent(m);
    for (let i = 0; i < 3; i++) {
      await agent.call('lock');
      await agent.call('unlockAfter', { ms: 30 });
      assert.equal(m.tryLock(20_000), true); // blocks this thread until the worker's timer fires
      assert.equal(loadWord(m), HELD_BY_ME);
      m.unlock();
    }
    assert.equal(await agent.call('isLocked'), false);
    assertClean(m);
  });

  it('a worker blocked in lock() gets the mutex when the main thread releases it', { timeout: 30_000 }, async () => {
    const m = new Mutex();
    const agent = await startAgent(m);
    m.lock();
    const { started, reply } = agent.send('lock');
    await started;
    await waitFor(() => queued(m) === 1, 'the worker to park');
    assert.equal(loadWord(m), (threadId << OWNER_SHIFT) | LOCKED_PARKED, 'a parked waiter sets state 2');
    m.unlock();
    assert.equal(await withinLimit(reply, 'worker lock()'), true);
    assert.equal(await agent.call('isHeld'), true);
    await agent.call('unlock');
    assertClean(m);
  });
});

describe('guards', () => {
  it('guard.unlock() releases once; later calls do nothing, even after the lock is retaken', () => {
    const m = new Mutex();
    const guard = m.lock();
    assert.equal(guard.released, false);
    guard.unlock();
    assert.equal(guard.released, true);
    assert.equal(m.isLocked, false);
    guard.unlock(); // no throw
    const again = m.lock();
    guard.unlock(); // must not release the new hold
    assert.equal(m.isHeldByCurrentThread, true);
    assert.equal(again.released, false);
    again.unlock();
    assertClean(m);
  });

  it('guard[Symbol.dispose]() and [Symbol.asyncDispose]() unlock', async () => {
    const m = new Mutex();
    const guard = m.lock();
    assert.equal(typeof guard[Symbol.dispose], 'function');
    guard[Symbol.dispose]();
    assert.equal(guard.released, true);
    assert.equal(m.isLocked, false);
    guard[Symbol.dispose](); // idempotent too

    const asyncGuard = await m.lockAsync();
    const result = asyncGuard[Symbol.asyncDispose]();
    assert.ok(result instanceof Promise);
    assert.equal(m.isLocked, false, 'released before the returned Promise settles');
    await result;
    assert.equal(asyncGuard.released, true);
    assertClean(m);
  });

  it('lock() and lockAsync() hand out again a guard that nothing has released through; never a released one', { timeout: 30_000 }, async () => {
    // A thread holds the mutex at most once, so the guard of an acquisition that m.unlock() ended
    // can only reach that same unlock(): code that ignores its guards allocates one, not one per lock().
    const m = new Mutex();
    const first = m.lock();
    m.unlock();
    const second = m.lock();
    assert.strictEqual(second, first);
    assert.equal(second.released, false);
    second.unlock();
    assert.equal(m.isLocked, false);
    const third = m.lock();
    assert.notStrictEqual(third, first, 'released through itself: never handed out again');
    first.unlock(); // released already: does nothing
    assert.equal(m.isHeldByCurrentThread, true);
    m.unlock();
    // A guard whose release was refused (the mutex was unlocked behind its back) is spent too.
    assert.throws(() => third.unlock(), { code: 'ERR_PARKLOCK_NOT_OWNER' });
    const fourth = m.lock();
    assert.notStrictEqual(fourth, third);
    m.unlock();
    // lockAsync() follows the same rule, at once or after a wait.
    assert.strictEqual(await m.lockAsync(), fourth);
    m.unlock();
    const agent = await startAgent(m);
    await agent.call('lock');
    const waiting = m.lockAsync({ signal: testSignal() });
    assert.equal(queued(m), 1);
    await agent.call('unlock');
    const handed = await withinLimit(waiting, 'lockAsync after the worker unlocked');
    assert.strictEqual(handed, fourth, 'after a wait too');
    handed.unlock();
    const fifth = await m.lockAsync();
    assert.notStrictEqual(fifth, fourth);
    fifth.unlock();
    assertClean(m);
  });

  it('unlocking the mutex directly does not mark the guard released, and the guard then throws', () => {
    // The guard releases what it holds exactly once; if the lock was released behind its back,
    // its own release is an unlock by a non-holder.
    const m = new Mutex();
    const guard = m.lock();
    m.unlock();
    assert.equal(guard.released, false);
    assert.throws(() => guard.unlock(), { code: 'ERR_PARKLOCK_NOT_OWNER' });
    assert.equal(guard.released, true);
    assertClean(m);
  });
});

describe('lockAsync', () => {
  it('resolves to a guard holding the mutex', async () => {
    const m = new Mutex();
    const promise = m.lockAsync();
    assert.ok(promise instanceof Promise);
    const guard = await promise;
    assert.equal(typeof guard.unlock, 'function');
    assert.equal(guard.released, false);
    assert.equal(m.isHeldByCurrentThread, true);
    assert.equal(loadWord(m), HELD_BY_ME);
    guard.unlock();
    assert.equal(guard.released, true);
    (await m.lockAsync({ timeout: 0 })).unlock(); // a free lock is taken even with timeout 0
    (await m.lockAsync({ timeout: Infinity, signal: new AbortController().signal })).unlock();
    (await m.lockAsync({})).unlock();
    assertClean(m);
  });

  it('a lockAsync by the holder waits for its release instead of failing', async () => {
    const m = new Mutex();
    const first = m.lock();
    const second = m.lockAsync({ signal: testSignal() });
    assert.equal(queued(m), 1);
    assert.equal(await isSettled(second), false);
    first.unlock();
    const guard = await withinLimit(second, 'lockAsync after the holder released');
    assert.equal(m.isHeldByCurrentThread, true);
    guard.unlock();
    assertClean(m);
  });

  it('timeout rejects with TimeoutError, leaves no waiter and the lock usable', async () => {
    const m = new Mutex();
    const guard = m.lock();
    for (const timeout of [0, 1, 30]) {
      const promise = m.lockAsync({ timeout });
      assert.equal(queued(m), 1, 'the waiter is queued');
      await assert.rejects(withinLimit(promise, 'lockAsync timeout'), (error) => {
        assert.ok(error instanceof TimeoutError);
        assert.ok(error instanceof Error);
        assert.equal(error.name, 'TimeoutError');
        assert.equal(error.code, 'ERR_PARKLOCK_TIMEOUT');
        return true;
      });
      assert.equal(queued(m), 0, 'the timed-out waiter left the parking lot');
      assert.equal(m.isHeldByCurrentThread, true, 'the timeout did not disturb the holder');
    }
    guard.unlock();
    assertClean(m);
    assert.equal(m.tryLock(), true);
    m.unlock();
    (await m.lockAsync({ timeout: 30 })).unlock();
    assertClean(m);
  });

  it('TimeoutError is exported and carries its code', () => {
    const error = new TimeoutError();
    assert.equal(error.name, 'TimeoutError');
    assert.equal(error.code, 'ERR_PARKLOCK_TIMEOUT');
    assert.ok(error instanceof Error);
  });

  it('an AbortSignal abort rejects with signal.reason and removes the waiter', async () => {
    const m = new Mutex();
    const guard = m.lock();
    const controller = new AbortController();
    const promise = m.lockAsync({ signal: controller.signal });
    assert.equal(queued(m), 1);
    assert.equal(await isSettled(promise), false);
    const reason = new Error('stop waiting');
    controller.abort(reason);
    await assert.rejects(withinLimit(promise, 'aborted lockAsync'), (error) => error === reason);
    assert.equal(queued(m), 0);

    // The default reason is an AbortError.
    const controller2 = new AbortController();
    const promise2 = m.lockAsync({ signal: controller2.signal, timeout: 60_000 });
    controller2.abort();
    await assert.rejects(promise2, (error) => error === controller2.signal.reason && error.name === 'AbortError');
    assert.equal(queued(m), 0);
    assert.equal(m.isHeldByCurrentThread, true);
    guard.unlock();
    assertClean(m);
  });

  it('an already-aborted signal rejects at once, whether the mutex is free or held, without taking it', async () => {
    const reason = new Error('already aborted');
    const signal = AbortSignal.abort(reason);
    const m = new Mutex();

    const whileFree = m.lockAsync({ signal });
    assert.equal(await isSettled(whileFree), true, 'rejected without waiting');
    await assert.rejects(whileFree, (error) => error === reason);
    assertClean(m); // the lock was not taken

    const guard = m.lock();
    const whileHeld = m.lockAsync({ signal });
    assert.equal(await isSettled(whileHeld), true);
    await assert.rejects(whileHeld, (error) => error === reason);
    assert.equal(queued(m), 0);
    assert.equal(loadWord(m), HELD_BY_ME, 'no waiter was announced');
    guard.unlock();

    let called = false;
    await assert.rejects(
      m.executeLocked(() => {
        called = true;
      }, { signal }),
      (error) => error === reason,
    );
    assert.equal(called, false);
    assertClean(m);
  });

  it('an abort or timeout after the lock was acquired has no effect', async () => {
    const m = new Mutex();
    const controller = new AbortController();
    const guard = await m.lockAsync({ signal: controller.signal, timeout: 1 });
    controller.abort();
    await tick(5);
    assert.equal(m.isHeldByCurrentThread, true);
    guard.unlock();

    // Also after a contended acquisition (the waiter was queued, then woken).
    const holder = m.lock();
    const controller2 = new AbortController();
    const waiting = m.lockAsync({ signal: controller2.signal, timeout: 20_000 });
    holder.unlock();
    const guard2 = await withinLimit(waiting, 'contended lockAsync');
    controller2.abort();
    assert.equal(m.isHeldByCurrentThread, true);
    guard2.unlock();
    assertClean(m);
  });

  it('concurrent lockAsync calls on one thread are served in FIFO order', async () => {
    const m = new Mutex();
    const holder = m.lock();
    const order = [];
    const count = 50;
    const done = [];
    for (let i = 0; i < count; i++) {
      done.push(
        m.lockAsync({ signal: testSignal() }).then(async (guard) => {
          order.push(i);
          assert.equal(m.isHeldByCurrentThread, true);
          if (i % 2 === 0) await tick(0); // hold it across an event-loop turn now and then
          guard.unlock();
        }),
      );
    }
    assert.equal(queued(m), count);
    holder.unlock();
    await withinLimit(Promise.all(done), 'FIFO lockAsync waiters');
    assert.deepEqual(order, Array.from({ length: count }, (_, i) => i));
    assertClean(m);
  });

  it('only one of many concurrent lockAsync holders runs at a time', async () => {
    const m = new Mutex();
    let inside = 0;
    let maxInside = 0;
    let total = 0;
    const worker = async () => {
      for (let i = 0; i < 50; i++) {
        const guard = await m.lockAsync({ signal: testSignal() });
        inside++;
        maxInside = Math.max(maxInside, inside);
        await tick(0);
        total++;
        inside--;
        guard.unlock();
      }
    };
    await withinLimit(Promise.all([worker(), worker(), worker(), worker()]), 'async holders');
    assert.equal(maxInside, 1);
    assert.equal(total, 200);
    assertClean(m);
  });
});

describe('executeLocked', () => {
  it('returns the result of a sync fn, holding the lock while it runs', async () => {
    const m = new Mutex();
    const result = await m.executeLocked(() => {
      assert.equal(m.isHeldByCurrentThread, true);
      return 42;
    });
    assert.equal(result, 42);
    assertClean(m);
  });

  it('awaits an async fn and holds the lock until it settles', async () => {
    const m = new Mutex();
    let heldAfterAwait;
    const promise = m.executeLocked(async () => {
      await tick(5);
      heldAfterAwait = m.isHeldByCurrentThread;
      return 'async result';
    });
    await tick(0);
    assert.equal(m.isLocked, true, 'held while fn is pending');
    assert.equal(await promise, 'async result');
    assert.equal(heldAfterAwait, true);
    assertClean(m);
  });

  it('rethrows a sync throw and releases the lock', async () => {
    const m = new Mutex();
    const error = new Error('sync failure');
    await assert.rejects(
      m.executeLocked(() => {
        throw error;
      }),
      (thrown) => thrown === error,
    );
    assertClean(m);
  });

  it('rethrows an async rejection and releases the lock', async () => {
    const m = new Mutex();
    const error = new Error('async failure');
    await assert.rejects(
      m.executeLocked(async () => {
        await tick(1);
        throw error;
      }),
      (thrown) => thrown === error,
    );
    assertClean(m);
  });

  it('waits for the lock, and with a timeout rejects without calling fn', async () => {
    const m = new Mutex();
    const holder = m.lock();
    let calls = 0;
    await assert.rejects(
      m.executeLocked(() => calls++, { timeout: 10 }),
      { name: 'TimeoutError', code: 'ERR_PARKLOCK_TIMEOUT' },
    );
    assert.equal(calls, 0);
    const later = m.executeLocked(() => ++calls, { signal: testSignal() });
    assert.equal(await isSettled(later), false);
    holder.unlock();
    assert.equal(await withinLimit(later, 'executeLocked after release'), 1);
    assertClean(m);
  });

  it('on a free mutex: takes it in the call, runs fn after the call returns, told { ownerDied: false }', async () => {
    const m = new Mutex();
    const order = [];
    let argument;
    const result = m.executeLocked((told) => {
      order.push('fn');
      argument = told;
      return 'done';
    });
    order.push('after the call');
    assert.equal(m.isHeldByCurrentThread, true, 'taken by the call itself');
    assert.ok(result instanceof Promise);
    assert.equal(await result, 'done');
    assert.deepEqual(order, ['after the call', 'fn']);
    assert.deepEqual(argument, { ownerDied: false });
    assert.ok(Object.isFrozen(argument));
    assertClean(m);
  });

  it("awaits what fn returns as `await` would: any thenable, a throwing `then`, a plain object", async () => {
    const m = new Mutex();
    let heldWhilePending;
    const thenable = {
      then(resolve) {
        setTimeout(() => {
          heldWhilePending = m.isHeldByCurrentThread;
          resolve('from a thenable');
        }, 1);
      },
    };
    assert.equal(await m.executeLocked(() => thenable), 'from a thenable');
    assert.equal(heldWhilePending, true);
    assertClean(m);
    const error = new Error('then getter');
    const throwing = {
      get then() {
        throw error;
      },
    };
    await assert.rejects(m.executeLocked(() => throwing), (thrown) => thrown === error);
    assertClean(m);
    const plain = { then: 5 };
    assert.equal(await m.executeLocked(() => plain), plain);
    const fn = () => {};
    assert.equal(await m.executeLocked(() => fn), fn);
    assertClean(m);
  });

  it('fn that unlocks the mutex itself makes the call reject with ERR_PARKLOCK_NOT_OWNER', async () => {
    const m = new Mutex();
    await assert.rejects(m.executeLocked(() => m.unlock()), { code: 'ERR_PARKLOCK_NOT_OWNER' });
    await assert.rejects(
      m.executeLocked(async () => {
        await tick(0);
        m.unlock();
      }),
      { code: 'ERR_PARKLOCK_NOT_OWNER' },
    );
    assertClean(m);
  });

  it('releases the mutex that a Condition wait inside fn gave back and took again', async () => {
    const m = new Mutex();
    const c = new Condition();
    const result = m.executeLocked(async () => {
      const waiting = c.waitAsync(m);
      assert.equal(m.isLocked, false, 'released while waiting');
      setTimeout(() => c.notifyOne(), 1);
      assert.equal(await waiting, true);
      assert.equal(m.isHeldByCurrentThread, true);
      return 'notified';
    });
    assert.equal(await withinLimit(result, 'executeLocked around a Condition wait'), 'notified');
    assertClean(m);
    // The guard lockAsync() hands out afterwards is a live one.
    const guard = await m.lockAsync();
    guard.unlock();
    assertClean(m);
  });

  it('serializes concurrent calls on one thread', async () => {
    const m = new Mutex();
    const shared = { value: 0 };
    const increment = () =>
      m.executeLocked(async () => {
        const v = shared.value;
        await tick(0);
        shared.value = v + 1;
      }, { signal: testSignal() });
    await withinLimit(Promise.all(Array.from({ length: 30 }, increment)), 'executeLocked calls');
    assert.equal(shared.value, 30);
    assertClean(m);
  });
});

describe('corrupt word', () => {
  const cases = [
    ['3 (state 3, no owner)', 3],
    [`${OTHER_OWNER} << 2 (owner bits, state 0)`, OTHER_OWNER << OWNER_SHIFT],
    ['another owner with state 3', (OTHER_OWNER << OWNER_SHIFT) | 3],
  ];
  for (const [label, value] of cases) {
    it(`word ${label}: lock/unlock/tryLock(timeout)/lockAsync/executeLocked throw ERR_PARKLOCK_CORRUPT`, async () => {
      const m = new Mutex();
      const word = wordOf(m);
      Atomics.store(word, 0, value);
      const CORRUPT = { code: 'ERR_PARKLOCK_CORRUPT' };

      assert.throws(() => m.lock(), CORRUPT, 'lock()');
      assert.throws(() => m.tryLock(5), CORRUPT, 'tryLock(5)');
      assert.equal(m.tryLock(), false, 'tryLock() cannot take it');
      assert.throws(() => m.unlock(), CORRUPT, 'unlock()');
      await assert.rejects(withinLimit(m.lockAsync({ signal: testSignal() }), 'lockAsync on a corrupt word'), CORRUPT);
      await assert.rejects(withinLimit(m.lockAsync({ timeout: 5 }), 'lockAsync on a corrupt word'), CORRUPT);
      let called = false;
      await assert.rejects(
        withinLimit(m.executeLocked(() => {
          called = true;
        }, { signal: testSignal() }), 'executeLocked on a corrupt word'),
        CORRUPT,
      );
      assert.equal(called, false);
      assert.equal(m.isLocked, true);
      assert.equal(m.isHeldByCurrentThread, false);
      assert.equal(Atomics.load(word, 0), value, 'no operation rewrote the corrupt word');
      assert.equal(queued(m), 0, 'nothing was queued on it');

      // Repaired by hand, it works again.
      Atomics.store(word, 0, 0);
      m.lock();
      m.unlock();
      assertClean(m);
    });
  }
});

describe('waitForUnlock', () => {
  const { OwnerDiedError } = require('../lib');
  const { pendingWaitCount } = require('../lib/async_waits');

  it('resolves at once, taking nothing, when the mutex is unlocked', async () => {
    const m = new Mutex();
    assert.equal(await m.waitForUnlock(), undefined);
    assert.equal(await m.waitForUnlock({ timeout: 0 }), undefined);
    assertClean(m);
  });

  it('rejects bad options and an aborted signal, locked or not, taking nothing', async () => {
    const m = new Mutex();
    for (const locked of [false, true]) {
      const holder = locked ? m.lock() : undefined;
      await assert.rejects(m.waitForUnlock(null), TYPE_ERROR());
      await assert.rejects(m.waitForUnlock({ timeout: -1 }), RANGE_ERROR);
      await assert.rejects(m.waitForUnlock({ signal: {} }), TYPE_ERROR());
      const reason = new Error('aborted before');
      await assert.rejects(m.waitForUnlock({ signal: AbortSignal.abort(reason) }), (e) => e === reason);
      assert.equal(queued(m), 0);
      holder?.unlock();
    }
    await assert.rejects(Mutex.prototype.waitForUnlock.call({}), TYPE_ERROR());
    assertClean(m);
  });

  it('resolves once a worker unlocks, without keeping the mutex', async () => {
    const m = new Mutex();
    const agent = await startAgent(m);
    await agent.call('lock');
    const waiting = m.waitForUnlock({ signal: testSignal() });
    await waitFor(() => queued(m) === 1, 'the wait to queue');
    assert.equal(await isSettled(waiting), false);
    await agent.call('unlock');
    assert.equal(await withinLimit(waiting, 'waitForUnlock'), undefined);
    assert.equal(m.isLocked, false);
    assert.equal(await agent.call('tryLock', { timeout: 0 }), true, 'the worker can take it again');
    await agent.call('unlock');
    assertClean(m);
  });

  it('takes its turn in the FIFO queue: a lockAsync queued before it gets the mutex first', async () => {
    const m = new Mutex();
    const agent = await startAgent(m);
    await agent.call('lock');
    const order = [];
    const first = m.lockAsync({ signal: testSignal() }).then((guard) => {
      order.push('lockAsync');
      return guard;
    });
    const unlocked = m.waitForUnlock({ signal: testSignal() }).then(() => order.push('waitForUnlock'));
    await waitFor(() => queued(m) === 2, 'both waits to queue');
    await agent.call('unlock');
    const guard = await withinLimit(first, 'the first lockAsync');
    assert.equal(await isSettled(unlocked), false, 'still waiting while the lockAsync holds it');
    guard.unlock();
    await withinLimit(unlocked, 'waitForUnlock');
    assert.deepEqual(order, ['lockAsync', 'waitForUnlock']);
    assertClean(m);
  });

  it('rejects with TimeoutError or signal.reason, leaving the worker holding the mutex', async () => {
    const m = new Mutex();
    const agent = await startAgent(m);
    await agent.call('lock');
    await assert.rejects(m.waitForUnlock({ timeout: 10 }), { name: 'TimeoutError', code: 'ERR_PARKLOCK_TIMEOUT' });
    const controller = new AbortController();
    const waiting = m.waitForUnlock({ signal: controller.signal });
    await waitFor(() => queued(m) === 1, 'the wait to queue');
    const reason = new Error('stop waiting');
    controller.abort(reason);
    await assert.rejects(withinLimit(waiting, 'the aborted wait'), (e) => e === reason);
    assert.equal(await agent.call('isHeld'), true);
    assert.equal(queued(m), 0);
    await agent.call('unlock');
    assertClean(m);
  });

  it('on the thread that holds the mutex, waits like lockAsync until another task unlocks it', async () => {
    const m = new Mutex();
    const holder = await m.lockAsync();
    const waiting = m.waitForUnlock({ signal: testSignal() });
    assert.equal(await isSettled(waiting), false);
    setTimeout(() => holder.unlock(), 5); // another task of this thread
    await withinLimit(waiting, 'waitForUnlock');
    assertClean(m);
  });

  it('rejects with the OwnerDiedError when the owner ended, its guard holding the mutex', { timeout: 30_000 }, async () => {
    const m = new Mutex();
    const agent = await startAgent(m);
    await agent.call('lock');
    const owner = agent.worker.threadId; // its Node threadId (read while it runs)
    agent.send('end', { how: 'exit' });
    await withinLimit(agent.exited, 'the owner to exit');
    const error = await m.waitForUnlock().then(
      () => assert.fail('resolved'),
      (e) => e,
    );
    assert.ok(error instanceof OwnerDiedError);
    assert.equal(error.threadId, owner);
    assert.equal(m.isHeldByCurrentThread, true, 'not unlocked behind the caller\'s back');
    error.guard.unlock();
    await m.waitForUnlock();
    assertClean(m);
    assert.equal(pendingWaitCount(m), 0);
  });
});

describe('cancelPendingWaits', () => {
  const { pendingWaitCount } = require('../lib/async_waits');
  const CANCELLED = { name: 'Error', code: 'ERR_PARKLOCK_CANCELLED' };

  it('returns 0 when nothing is pending', () => {
    const m = new Mutex();
    assert.equal(m.cancelPendingWaits(), 0);
    m.lock().unlock();
    assert.equal(m.cancelPendingWaits(), 0);
    assertClean(m);
  });

  it('rejects every pending wait of this thread queued behind a worker, which keeps the mutex', async () => {
    const m = new Mutex();
    const agent = await startAgent(m);
    await agent.call('lock');
    let ran = false;
    const waits = [
      m.lockAsync(),
      m.lockAsync({ timeout: 60_000 }),
      m.lockAsync({ signal: new AbortController().signal }),
      m.executeLocked(() => {
        ran = true;
      }),
      m.waitForUnlock(),
    ];
    await waitFor(() => queued(m) === waits.length, 'every wait to queue');
    assert.equal(pendingWaitCount(m), waits.length);
    assert.equal(m.cancelPendingWaits(), waits.length);
    for (const [i, wait] of waits.entries()) {
      await assert.rejects(withinLimit(wait, `wait #${i}`), CANCELLED);
    }
    assert.equal(ran, false);
    assert.equal(queued(m), 0, 'nothing stays queued');
    assert.equal(pendingWaitCount(m), 0);
    assert.equal(await agent.call('isHeld'), true);
    assert.equal(m.cancelPendingWaits(), 0);
    await agent.call('unlock');
    const guard = await withinLimit(m.lockAsync(), 'lockAsync after the cancel');
    guard.unlock();
    assertClean(m);
  });

  it('rejects with the reason given, and leaves waits of other threads and other objects alone', async () => {
    const m = new Mutex();
    const other = new Mutex({ buffer: m.buffer, byteOffset: m.byteOffset }); // the same mutex
    const agent = await startAgent(m);
    const holder = m.lock();
    await agent.call('startLockAsync', { key: 'worker' });
    const mine = m.lockAsync();
    const viaOther = other.lockAsync({ signal: testSignal() });
    await waitFor(() => queued(m) === 3, 'three waits to queue');
    const reason = new Error('pool shutting down');
    assert.equal(m.cancelPendingWaits(reason), 1);
    await assert.rejects(withinLimit(mine, 'the cancelled wait'), (e) => e === reason);
    assert.equal(queued(m), 2);
    holder.unlock();
    assert.equal(await agent.call('settle', { key: 'worker' }), 'acquired');
    await agent.call('unlock');
    (await withinLimit(viaOther, 'the other object\'s wait')).unlock();
    assertClean(m);
  });

  it('racing with a hand-over: the cancelled wait takes nothing and the mutex stays usable', async () => {
    const m = new Mutex();
    for (let i = 0; i < 50; i++) {
      const holder = m.lock();
      const waiting = m.lockAsync();
      await tick(0);
      holder.unlock(); // wakes the waiter (or hands it the lock); the wake-up is on its way
      const cancelled = m.cancelPendingWaits();
      const outcome = await withinLimit(waiting.then((g) => g, (e) => e), 'the wait');
      if (cancelled === 1) assert.equal(outcome.code, 'ERR_PARKLOCK_CANCELLED');
      else outcome.unlock();
      await waitFor(() => !m.isLocked && queued(m) === 0, 'the mutex to be free');
    }
    assertClean(m);
    assert.equal(pendingWaitCount(m), 0);
  });

  it('keeps no record of waits that settled, however they settled', async () => {
    const m = new Mutex();
    for (let i = 0; i < 20; i++) (await m.lockAsync()).unlock();
    const holder = m.lock();
    const acquired = m.lockAsync();
    const timedOut = m.lockAsync({ timeout: 1 });
    const controller = new AbortController();
    const aborted = m.lockAsync({ signal: controller.signal });
    await assert.rejects(timedOut, { name: 'TimeoutError' });
    controller.abort();
    await assert.rejects(aborted, { name: 'AbortError' });
    assert.equal(pendingWaitCount(m), 1);
    holder.unlock();
    (await withinLimit(acquired, 'the wait')).unlock();
    assert.equal(pendingWaitCount(m), 0);
    assertClean(m);
  });
});
