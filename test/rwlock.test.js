'use strict';
// RWLock: construction and bad input, both sides on one thread, the Promise forms, and with
// workers: readers that overlap, a writer that readers arriving later cannot overtake, timeouts,
// terminate() of blocked workers, a stress test with exact counts and untorn reads, a writer whose
// thread ends holding the lock (reported to the next acquirer in either mode, and to waiters queued
// before), and a blocked call whose own lockAsync is granted the write lock.
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { RWLock, TimeoutError, OwnerDiedError, layouts } = require('../lib');
const native = require('../lib/native');
const { threadId, pendingCount } = require('../lib/async_waits');
const {
  HANG_LIMIT_MS,
  fixture,
  tick,
  waitFor,
  withinLimit,
  isSettled,
  testSignal,
  runWorkers,
  agentsPerTest,
} = require('./helpers');

const { WRITER, PARKED, UPGRADABLE, DRAINING, ONE_READER, MAX_READERS, READER_SHIFT } = layouts.rwlock;

const TYPE_ERROR = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' };
const RANGE_ERROR = { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' };
const NOT_OWNER = { name: 'Error', code: 'ERR_PARKLOCK_NOT_OWNER' };
const DEADLOCK = { name: 'Error', code: 'ERR_PARKLOCK_DEADLOCK' };
const CORRUPT = { code: 'ERR_PARKLOCK_CORRUPT' };

// The lock's two shared words: [state, owner].
function wordsOf(rw) {
  return new Int32Array(rw.buffer, rw.byteOffset, 2);
}
function words(rw) {
  return Array.from(wordsOf(rw), (_, i) => Atomics.load(wordsOf(rw), i));
}
function queued(rw) {
  return native.queuedCount(wordsOf(rw), 0);
}
// The draining writer's queue (the upgrader's, or a queued writer's), keyed by the owner word.
function draining(rw) {
  return native.queuedCount(wordsOf(rw), 1);
}

// Free, with no owner, nobody queued, and no asynchronous wait left pending on this thread.
function assertFree(rw) {
  assert.deepEqual(words(rw), [0, 0], 'both words are 0');
  assert.equal(rw.isLocked, false);
  assert.equal(queued(rw), 0, 'no waiter is left in the parking lot');
  assert.equal(pendingCount(), 0, 'no asynchronous wait is left pending');
}

// Workers running test/fixtures/rwlock_agent.js on one lock, terminated after each test.
const startAgent = agentsPerTest(fixture('rwlock_agent.js'), (lock) => ({ lock }));

describe('RWLock construction', () => {
  it('new RWLock() allocates its own zeroed SharedArrayBuffer of RWLock.BYTES', () => {
    const rw = new RWLock();
    assert.ok(rw.buffer instanceof SharedArrayBuffer);
    assert.equal(RWLock.BYTES, 8);
    assert.equal(RWLock.ALIGN, 4);
    assert.equal(rw.buffer.byteLength, RWLock.BYTES);
    assert.equal(rw.byteOffset, 0);
    assert.deepEqual(Object.keys(rw), ['buffer', 'byteOffset'], 'only the location is enumerable');
    assert.notEqual(new RWLock().buffer, rw.buffer);
    assert.equal(layouts.rwlock.WORDS, 2);
    assert.ok(Object.isFrozen(layouts.rwlock));
    assertFree(rw);
  });

  it('new RWLock(sab, byteOffset) uses the two words at byteOffset and nothing else', () => {
    const sab = new SharedArrayBuffer(24);
    const all = new Int32Array(sab);
    const rw = new RWLock(sab, 8);
    const write = rw.lock();
    assert.deepEqual(Array.from(all), [0, 0, WRITER, threadId, 0, 0]);
    write.unlock();
    const a = rw.lockShared();
    const b = rw.lockShared();
    assert.deepEqual(Array.from(all), [0, 0, 2 * ONE_READER, 0, 0, 0]);
    a.unlock();
    b.unlock();
    assert.deepEqual(Array.from(all), [0, 0, 0, 0, 0, 0]);
    assertFree(rw);
  });

  it('new RWLock({ buffer, byteOffset }) and a structured clone are the same lock; other offsets are not', () => {
    const sab = new SharedArrayBuffer(16);
    const a = new RWLock(sab, 8);
    const b = new RWLock(structuredClone(a));
    const c = new RWLock({ buffer: sab, byteOffset: 8 });
    const d = new RWLock({ buffer: sab }); // byteOffset defaults to 0: another lock
    a.lock();
    assert.equal(b.isWriteLocked, true);
    assert.equal(c.isWriteLockedByCurrentThread, true);
    assert.equal(d.isLocked, false);
    assert.equal(d.tryLock(), true);
    c.unlock(); // the same thread owns it, whichever object it uses
    d.unlock();
    for (const rw of [a, b, c, d]) assertFree(rw);
  });

  it('an RWLock posted to a worker is the same lock, and the owner word names the worker', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const agent = await startAgent(rw);
    assert.equal(await agent.call('tryLock'), true);
    assert.equal(rw.isWriteLocked, true);
    assert.equal(rw.isWriteLockedByCurrentThread, false);
    assert.deepEqual(words(rw), [WRITER, agent.threadId]);
    assert.deepEqual(await agent.call('state'), { isLocked: true, isWriteLocked: true, readers: 0, mine: true });
    await agent.call('unlock');
    assertFree(rw);
  });
});

describe('RWLock bad input', () => {
  it('rejects memory that is not a SharedArrayBuffer and bad byteOffsets', () => {
    assert.throws(() => new RWLock(new ArrayBuffer(8)), { ...TYPE_ERROR, message: /cannot be shared/ });
    for (const value of ['buffer', 0, null, true, new Int32Array(new SharedArrayBuffer(8))]) {
      assert.throws(() => new RWLock(value), TYPE_ERROR, `new RWLock(${String(value)})`);
    }
    const sab = new SharedArrayBuffer(16);
    for (const offset of ['8', null, 8n, {}]) {
      assert.throws(() => new RWLock(sab, offset), TYPE_ERROR, `byteOffset ${String(offset)}`);
    }
    for (const offset of [2, 6, -4, 0.5, NaN, Infinity, 12, 16]) {
      assert.throws(() => new RWLock(sab, offset), RANGE_ERROR, `byteOffset ${offset}`);
      assert.throws(() => new RWLock({ buffer: sab, byteOffset: offset }), RANGE_ERROR);
    }
    assert.throws(() => new RWLock(new SharedArrayBuffer(4)), RANGE_ERROR, 'one word is not enough');
    assert.throws(() => new RWLock({ buffer: sab, byteOffset: 0 }, 8), TYPE_ERROR);
    assert.equal(new RWLock(sab, 8).byteOffset, 8);
    assert.deepEqual(Array.from(new Int32Array(sab)), [0, 0, 0, 0]);
  });

  it('tryLock / tryLockShared reject a timeout that is not a non-negative number', () => {
    const rw = new RWLock();
    for (const method of ['tryLock', 'tryLockShared']) {
      for (const timeout of [NaN, -1, -Infinity]) assert.throws(() => rw[method](timeout), RANGE_ERROR);
      for (const timeout of ['10', null, 10n, {}]) assert.throws(() => rw[method](timeout), TYPE_ERROR);
    }
    assertFree(rw);
  });

  it('lockAsync / lockSharedAsync reject bad options (never throwing) and take nothing', async () => {
    const rw = new RWLock();
    for (const method of ['lockAsync', 'lockSharedAsync']) {
      for (const options of [null, 5, 'x']) await assert.rejects(rw[method](options), TYPE_ERROR);
      for (const timeout of ['5', null]) await assert.rejects(rw[method]({ timeout }), TYPE_ERROR);
      for (const timeout of [-1, NaN]) await assert.rejects(rw[method]({ timeout }), RANGE_ERROR);
      for (const signal of [null, {}, new EventTarget()]) await assert.rejects(rw[method]({ signal }), TYPE_ERROR);
    }
    assertFree(rw);
  });

  it('releases that match no hold throw ERR_PARKLOCK_NOT_OWNER and change nothing', () => {
    const rw = new RWLock();
    assert.throws(() => rw.unlock(), NOT_OWNER, 'unlock of a free lock');
    assert.throws(() => rw.unlockShared(), NOT_OWNER, 'unlockShared of a free lock');

    const write = rw.lock();
    assert.throws(() => rw.unlockShared(), { ...NOT_OWNER, message: /use unlock\(\)/ });
    assert.deepEqual(words(rw), [WRITER, threadId]);
    write.unlock();
    assert.throws(() => rw.unlock(), NOT_OWNER, 'a second unlock');

    const read = rw.lockShared();
    assert.throws(() => rw.unlock(), { ...NOT_OWNER, message: /use unlockShared\(\)/ });
    assert.deepEqual(words(rw), [ONE_READER, 0]);
    read.unlock();
    assert.throws(() => rw.unlockShared(), NOT_OWNER, 'one read release too many');
    assert.throws(() => read.unlock() || rw.unlockShared(), NOT_OWNER, 'a released guard does nothing');
    assertFree(rw);
  });

  it('unlock by a thread that does not hold the write lock throws and leaves it held', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const agent = await startAgent(rw);
    await agent.call('lock');
    assert.throws(() => rw.unlock(), { ...NOT_OWNER, message: /another thread/ });
    assert.deepEqual(words(rw), [WRITER, agent.threadId]);
    // Also with a waiter parked (the state's parked bit set).
    const waiting = rw.lockSharedAsync();
    assert.deepEqual(words(rw), [WRITER | PARKED, agent.threadId]);
    assert.throws(() => rw.unlock(), NOT_OWNER);
    await agent.call('unlock');
    (await withinLimit(waiting, 'lockSharedAsync after the worker unlocked')).unlock();
    assertFree(rw);
  });

  it('the write holder is refused lock() and lockShared() with ERR_PARKLOCK_DEADLOCK; try forms return false', () => {
    const rw = new RWLock();
    rw.lock();
    assert.throws(() => rw.lock(), DEADLOCK);
    assert.throws(() => rw.lockShared(), DEADLOCK);
    assert.equal(rw.tryLock(), false);
    assert.equal(rw.tryLockShared(), false);
    assert.equal(rw.tryLock(50), false, 'does not wait for itself');
    assert.equal(rw.tryLockShared(50), false);
    assert.deepEqual(words(rw), [WRITER, threadId], 'nothing announced a waiter');
    rw.unlock();
    assertFree(rw);
  });

  it('the Promise forms by the write holder wait for its release instead of failing', async () => {
    const rw = new RWLock();
    const write = rw.lock();
    const read = rw.lockSharedAsync();
    const nextWrite = rw.lockAsync();
    assert.equal(queued(rw), 2);
    assert.equal(await isSettled(read), false);
    write.unlock();
    (await withinLimit(read, 'lockSharedAsync')).unlock();
    (await withinLimit(nextWrite, 'lockAsync')).unlock();
    assertFree(rw);
  });

  const corruptStates = [
    ['negative', -4],
    ['writer with readers', WRITER | ONE_READER],
    ['writer with readers, parked', WRITER | (3 * ONE_READER) | PARKED],
    ['parked alone', PARKED],
    ['writer with the upgradable bit', WRITER | UPGRADABLE],
    ['upgradable without a reader', UPGRADABLE],
    ['writer with the draining bit', WRITER | DRAINING],
  ];
  for (const [label, value] of corruptStates) {
    it(`a corrupt state word (${label}) makes every operation throw ERR_PARKLOCK_CORRUPT`, async () => {
      const rw = new RWLock();
      Atomics.store(wordsOf(rw), 0, value);
      assert.throws(() => rw.lock(), CORRUPT, 'lock()');
      assert.throws(() => rw.lockShared(), CORRUPT, 'lockShared()');
      assert.throws(() => rw.tryLock(), CORRUPT, 'tryLock()');
      assert.throws(() => rw.tryLockShared(5), CORRUPT, 'tryLockShared(5)');
      assert.throws(() => rw.unlock(), CORRUPT, 'unlock()');
      assert.throws(() => rw.unlockShared(), CORRUPT, 'unlockShared()');
      assert.throws(() => rw.lockUpgradable(), CORRUPT, 'lockUpgradable()');
      assert.throws(() => rw.tryLockUpgradable(5), CORRUPT, 'tryLockUpgradable(5)');
      assert.throws(() => rw.unlockUpgradable(), CORRUPT, 'unlockUpgradable()');
      assert.throws(() => rw.upgrade(), CORRUPT, 'upgrade()');
      await assert.rejects(withinLimit(rw.upgradeAsync(), 'upgradeAsync'), CORRUPT);
      await assert.rejects(withinLimit(rw.lockUpgradableAsync(), 'lockUpgradableAsync'), CORRUPT);
      await assert.rejects(withinLimit(rw.lockAsync(), 'lockAsync'), CORRUPT);
      await assert.rejects(withinLimit(rw.lockSharedAsync({ timeout: 5 }), 'lockSharedAsync'), CORRUPT);
      assert.equal(Atomics.load(wordsOf(rw), 0), value, 'no operation rewrote the corrupt word');
      assert.equal(queued(rw), 0);
      // Named as writer by the owner word, with a state that says nobody writes.
      Atomics.store(wordsOf(rw), 1, threadId);
      assert.throws(() => rw.unlock(), CORRUPT);
      assert.deepEqual(words(rw), [value, threadId]);
      Atomics.store(wordsOf(rw), 0, 0);
      assert.throws(() => rw.unlock(), CORRUPT, 'owner word without the writer bit');
      Atomics.store(wordsOf(rw), 1, 0);
      rw.lock().unlock();
      assertFree(rw);
    });
  }

  it('a read hold beyond MAX_READERS is refused with ERR_PARKLOCK_TOO_MANY_READERS', async () => {
    const rw = new RWLock();
    const full = MAX_READERS << READER_SHIFT;
    Atomics.store(wordsOf(rw), 0, full);
    assert.equal(rw.readers, MAX_READERS);
    const TOO_MANY = { code: 'ERR_PARKLOCK_TOO_MANY_READERS' };
    assert.throws(() => rw.lockShared(), TOO_MANY);
    assert.throws(() => rw.tryLockShared(), TOO_MANY);
    await assert.rejects(rw.lockSharedAsync(), TOO_MANY);
    assert.equal(Atomics.load(wordsOf(rw), 0), full);
    rw.unlockShared();
    assert.equal(rw.readers, MAX_READERS - 1);
    assert.equal(rw.tryLockShared(), true);
    Atomics.store(wordsOf(rw), 0, 0);
    assertFree(rw);
  });
});

describe('RWLock on one thread', () => {
  it('lock() and unlock() write and clear both words; a write lock excludes everything', () => {
    const rw = new RWLock();
    const guard = rw.lock();
    assert.deepEqual(words(rw), [WRITER, threadId]);
    assert.equal(rw.isLocked, true);
    assert.equal(rw.isWriteLocked, true);
    assert.equal(rw.isWriteLockedByCurrentThread, true);
    assert.equal(rw.readers, 0);
    assert.equal(guard.released, false);
    guard.unlock();
    assert.equal(guard.released, true);
    guard.unlock(); // a guard releases once
    assert.equal(rw.isWriteLockedByCurrentThread, false);
    assertFree(rw);
  });

  it('lock() and lockAsync() hand out again a write guard that nothing has released through; never a released one', async () => {
    // As Mutex: a thread holds the write lock at most once. Read guards are always new (a thread
    // may hold several read locks at once, each released once).
    const rw = new RWLock();
    const first = rw.lock();
    rw.unlock();
    assert.strictEqual(rw.lock(), first);
    first.unlock();
    const second = rw.lock();
    assert.notStrictEqual(second, first);
    first.unlock(); // released already: does nothing
    assert.equal(rw.isWriteLockedByCurrentThread, true);
    rw.downgrade();
    rw.unlockShared();
    assert.strictEqual(rw.lock(), second, 'the write hold that downgrade() ended');
    second[Symbol.dispose]();
    assertFree(rw);
    const third = await rw.lockAsync();
    assert.notStrictEqual(third, second);
    rw.unlock();
    assert.strictEqual(await rw.lockAsync(), third);
    third.unlock();
    assertFree(rw);
    const reads = [rw.lockShared(), rw.lockShared()];
    assert.notStrictEqual(reads[0], reads[1]);
    reads[0].unlock();
    reads[1].unlock();
    assertFree(rw);
  });

  it('read locks are counted, exclude a writer, and their guards release one hold each', () => {
    const rw = new RWLock();
    const guards = [rw.lockShared(), rw.lockShared()];
    assert.equal(rw.tryLockShared(), true);
    assert.equal(rw.readers, 3);
    assert.equal(rw.isLocked, true);
    assert.equal(rw.isWriteLocked, false);
    assert.equal(rw.isWriteLockedByCurrentThread, false);
    assert.equal(rw.tryLock(), false);
    assert.deepEqual(words(rw), [3 * ONE_READER, 0]);
    guards[0].unlock();
    guards[0].unlock();
    assert.equal(rw.readers, 2);
    guards[1][Symbol.dispose]();
    rw.unlockShared();
    assertFree(rw);
  });

  it('lockAsync / lockSharedAsync resolve to guards at once when available, also with timeout 0', async () => {
    const rw = new RWLock();
    const write = await rw.lockAsync({ timeout: 0 });
    assert.equal(rw.isWriteLockedByCurrentThread, true);
    await write[Symbol.asyncDispose]();
    const reads = await Promise.all([rw.lockSharedAsync(), rw.lockSharedAsync({ timeout: 0 })]);
    assert.equal(rw.readers, 2);
    for (const guard of reads) guard.unlock();
    assertFree(rw);
  });

  it('waiters are granted in FIFO order: readers at the head together, each writer alone', async () => {
    const rw = new RWLock();
    const holder = rw.lock();
    const events = [];
    const take = (name, promise) =>
      promise.then(async (guard) => {
        events.push(`${name}:${rw.isWriteLocked ? 'W' : rw.readers}`);
        await tick(2);
        events.push(`-${name}`);
        guard.unlock();
      });
    const done = [
      take('r1', rw.lockSharedAsync()),
      take('r2', rw.lockSharedAsync()),
      take('w3', rw.lockAsync()),
      take('r4', rw.lockSharedAsync()),
      take('r5', rw.lockSharedAsync()),
      take('w6', rw.lockAsync()),
    ];
    assert.equal(queued(rw), 6);
    assert.equal(rw.tryLockShared(), false, 'no reader barges in while others wait');
    holder.unlock();
    await withinLimit(Promise.all(done), 'FIFO waiters');
    assert.deepEqual(events, ['r1:2', 'r2:2', '-r1', '-r2', 'w3:W', '-w3', 'r4:2', 'r5:2', '-r4', '-r5', 'w6:W', '-w6']);
    assertFree(rw);
  });

  it('timeouts reject with TimeoutError and leave no waiter and no parked bit', async () => {
    const rw = new RWLock();
    const write = rw.lock();
    for (const [method, timeout] of [['lockSharedAsync', 0], ['lockAsync', 1], ['lockSharedAsync', 20]]) {
      const promise = rw[method]({ timeout });
      assert.equal(queued(rw), 1);
      assert.deepEqual(words(rw), [WRITER | PARKED, threadId]);
      await assert.rejects(withinLimit(promise, method), (error) => error instanceof TimeoutError && error.code === 'ERR_PARKLOCK_TIMEOUT');
      assert.equal(queued(rw), 0);
      assert.deepEqual(words(rw), [WRITER, threadId], 'exactly as before the wait');
    }
    write.unlock();
    assertFree(rw);
  });

  it('an abort rejects with signal.reason and removes the waiter; an aborted signal takes nothing', async () => {
    const rw = new RWLock();
    const read = rw.lockShared();
    const controller = new AbortController();
    const promise = rw.lockAsync({ signal: controller.signal });
    assert.equal(queued(rw), 1);
    const reason = new Error('stop');
    controller.abort(reason);
    await assert.rejects(withinLimit(promise, 'aborted lockAsync'), (error) => error === reason);
    assert.deepEqual(words(rw), [ONE_READER, 0]);
    read.unlock();

    const aborted = AbortSignal.abort(reason);
    await assert.rejects(rw.lockAsync({ signal: aborted }), (error) => error === reason);
    await assert.rejects(rw.lockSharedAsync({ signal: aborted }), (error) => error === reason);
    assertFree(rw);
  });

  it('readers queued behind a writer whose wait ends join the readers holding the lock', async () => {
    const rw = new RWLock();
    const first = rw.lockShared();
    const writer = rw.lockAsync({ timeout: 10 });
    const reader = rw.lockSharedAsync();
    assert.equal(queued(rw), 2);
    assert.equal(await isSettled(reader), false);
    await assert.rejects(withinLimit(writer, 'timed-out lockAsync'), TimeoutError);
    const second = await withinLimit(reader, 'reader behind the writer that left');
    assert.deepEqual(words(rw), [2 * ONE_READER, 0], 'two readers, nobody parked');
    first.unlock();
    second.unlock();
    assertFree(rw);
  });
});

describe('RWLock across workers', () => {
  it('readers overlap: a worker takes a read lock while this thread holds one', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const agent = await startAgent(rw);
    const mine = rw.lockShared();
    assert.equal(await agent.call('lockShared'), true, 'not blocked by the read lock held here');
    assert.equal(rw.readers, 2);
    assert.equal(await agent.call('tryLock'), false);
    assert.equal(rw.tryLock(), false);
    mine.unlock();
    assert.equal(await agent.call('tryLockShared'), true);
    assert.equal(rw.readers, 2);
    await agent.call('unlockShared');
    await agent.call('unlockShared');
    assertFree(rw);
  });

  it('a writer waiting behind readers gets the lock before readers that arrive later', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const writer = await startAgent(rw);
    const reader = await startAgent(rw);
    const mine = rw.lockShared();

    // Nobody is queued, so the blocked writer drains the readers: it waits on its own key, and the
    // draining bit keeps every reader arriving after it out.
    const writerLock = writer.send('lock');
    await withinLimit(writerLock.started, 'writer starting');
    await waitFor(() => draining(rw) === 1, 'the writer to park as the draining writer');
    assert.deepEqual(words(rw), [ONE_READER | DRAINING, 0]);
    assert.equal(queued(rw), 0);
    assert.equal(rw.tryLockShared(), false, 'a newcomer reader does not pass the writer');

    const readerLock = reader.send('lockShared');
    await withinLimit(readerLock.started, 'late reader starting');
    await waitFor(() => queued(rw) === 1, 'the late reader to park');
    assert.deepEqual(words(rw), [ONE_READER | DRAINING | PARKED, 0]);
    const lateMine = rw.lockSharedAsync();
    assert.equal(queued(rw), 2);

    mine.unlock(); // the last reader: the lock goes to the writer alone
    assert.equal(await withinLimit(writerLock.reply, 'draining writer'), true);
    assert.deepEqual(words(rw), [WRITER | PARKED, writer.threadId]);
    assert.equal(await isSettled(lateMine), false);
    assert.equal(queued(rw), 2);
    assert.equal(draining(rw), 0);

    await writer.call('unlock'); // both late readers together
    assert.equal(await withinLimit(readerLock.reply, 'late reader'), true);
    const lateGuard = await withinLimit(lateMine, 'late reader here');
    assert.deepEqual(words(rw), [2 * ONE_READER, 0]);
    lateGuard.unlock();
    await reader.call('unlockShared');
    assertFree(rw);
  });

  it('tryLock(timeout) / tryLockShared(timeout) give up after the timeout and leave no waiter', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const agent = await startAgent(rw);
    await agent.call('lockShared');
    const start = performance.now();
    assert.equal(rw.tryLock(30), false);
    assert.ok(performance.now() - start >= 28, 'waited for the timeout');
    assert.deepEqual(words(rw), [ONE_READER, 0], 'no parked bit left behind');
    assert.equal(queued(rw), 0);
    await agent.call('unlockShared');

    await agent.call('lock');
    assert.equal(rw.tryLockShared(10), false);
    assert.equal(rw.tryLock(10), false);
    assert.deepEqual(words(rw), [WRITER, agent.threadId]);
    assert.equal(queued(rw), 0);
    await agent.call('unlock');
    assertFree(rw);
  });

  it('lock() and lockShared() block until a worker releases', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const agent = await startAgent(rw);
    await agent.call('lockShared');
    await agent.call('unlockSharedAfter', { ms: 30 });
    rw.lock().unlock(); // blocks this thread until the worker's timer fires
    await agent.call('lock');
    await agent.call('unlockAfter', { ms: 30 });
    assert.equal(rw.tryLockShared(20_000), true);
    rw.unlockShared();
    assertFree(rw);
  });

  for (const [blocked, held] of [['lock', 'read'], ['lockShared', 'write']]) {
    it(`terminate() of a worker blocked in ${blocked}() is prompt and leaves the lock as it was`, { timeout: 30_000 }, async () => {
      const rw = new RWLock();
      const agent = await startAgent(rw);
      const holder = held === 'read' ? rw.lockShared() : rw.lock();
      const before = words(rw);
      const { started, reply } = agent.send(blocked);
      await withinLimit(started, 'worker starting');
      // A writer beside readers alone waits as the draining writer, on its own key.
      const parkedOn = held === 'read' ? draining : queued;
      await waitFor(() => parkedOn(rw) === 1, 'the worker to park');
      assert.deepEqual(words(rw), held === 'read' ? [ONE_READER | DRAINING, 0] : [WRITER | PARKED, threadId]);

      const start = performance.now();
      await withinLimit(agent.terminate(), 'terminate()');
      const elapsed = performance.now() - start;
      assert.ok(elapsed < 2000, `terminate() took ${elapsed} ms`);
      await assert.rejects(reply, /exited/);
      assert.equal(queued(rw), 0, 'the waiter left the parking lot');
      assert.equal(draining(rw), 0);
      assert.deepEqual(words(rw), before, 'held as before, parked and draining bits cleared');
      holder.unlock();
      assertFree(rw);

      const other = await startAgent(rw);
      assert.equal(await other.call('tryLock'), true);
      await other.call('unlock');
      assertFree(rw);
    });
  }

  it('terminate() of a worker with a queued lockAsync lets the readers behind it in', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const agent = await startAgent(rw);
    const first = rw.lockShared();
    await agent.call('startLockAsync', { key: 'w' });
    assert.equal(queued(rw), 1);
    const behind = rw.lockSharedAsync();
    assert.equal(queued(rw), 2);
    assert.equal(await isSettled(behind), false);

    await withinLimit(agent.terminate(), 'terminate()');
    const second = await withinLimit(behind, 'reader behind the terminated writer');
    assert.deepEqual(words(rw), [2 * ONE_READER, 0]);
    first.unlock();
    second.unlock();
    assertFree(rw);
  });

  // A release hands the lock to a writer at the head of the queue on a fair turn (the bucket's
  // timer, due within 1 ms of the first waiter's arrival), and otherwise wakes it to compete; a
  // busy worker terminated with either in hand must pass it on.
  for (const turn of ['a fair turn', 'a wake-up to compete']) {
    it(`a write lock given to a busy worker on ${turn} is passed on when the worker is terminated`, { timeout: 30_000 }, async () => {
      const rw = new RWLock();
      const agent = await startAgent(rw);
      const holder = rw.lock();
      await agent.call('startLockAsync', { key: 'w' });
      await withinLimit(agent.send('spin').started, 'worker starting to spin');
      // Aborted if the test fails, so that a lost grant does not leave this thread waiting forever.
      const cleanup = new AbortController();
      const mine = rw.lockSharedAsync({ signal: cleanup.signal });
      mine.catch(() => {}); // awaited below; rejected only by the cleanup
      try {
        assert.equal(queued(rw), 2);
        if (turn === 'a fair turn') await tick(20); // well past the 1 ms fairness bound
        holder.unlock(); // the worker's wait cannot settle while it spins
        const handedOver = [WRITER | PARKED, agent.threadId];
        if (turn === 'a fair turn') {
          assert.deepEqual(words(rw), handedOver);
        } else {
          // Usually freed for the worker to compete for, with the reader still asleep; the timer
          // may have come due all the same.
          assert.ok([String(handedOver), '0,0'].includes(String(words(rw))), `words ${words(rw)}`);
        }
        assert.equal(await isSettled(mine), false);

        await withinLimit(agent.terminate(), 'terminate()');
        const guard = await withinLimit(mine, 'lockSharedAsync after the worker was terminated');
        assert.deepEqual(words(rw), [ONE_READER, 0]);
        guard.unlock();
        assertFree(rw);
      } finally {
        cleanup.abort();
      }
    });
  }

  it('stress: writers (some downgrading), readers and upgraders in workers, sync, async and giving up, exact counts, no torn reads, no write between an upgrader\'s read and its upgrade', { timeout: 60_000 }, async () => {
    const rw = new RWLock();
    const data = new SharedArrayBuffer(8 * 4);
    const inside = new SharedArrayBuffer(4 * 4);
    const WRITERS = 2;
    const UPGRADERS = 2;
    const READERS = 3;
    const ROUNDS = 4000;
    const roles = [
      ...Array(WRITERS).fill('writer'),
      ...Array(UPGRADERS).fill('upgrader'),
      ...Array(READERS).fill('reader'),
    ];
    const results = await runWorkers(
      fixture('rwlock_stress.js'),
      roles.map((role, index) => ({ lock: rw, data, inside, role, rounds: ROUNDS, index })),
      { limit: 50_000 },
    );
    const counts = new Int32Array(data);
    const writes = results.reduce((sum, r) => sum + r.writes, 0);
    assert.ok(writes >= UPGRADERS * ROUNDS, 'every upgrader wrote every round');
    assert.deepEqual(Array.from(counts), Array(counts.length).fill(writes), 'every write counted, in every word');
    assert.equal(results.reduce((sum, r) => sum + r.torn, 0), 0, 'no reader saw a half-done write');
    assert.equal(results.reduce((sum, r) => sum + r.stale, 0), 0, 'no write came between an upgrader\'s read and its upgrade');
    const [writersInside, readersInside, maxReaders, conflicts] = new Int32Array(inside);
    assert.equal(conflicts, 0, 'a writer was never inside with anyone else');
    assert.equal(writersInside + readersInside, 0);
    assert.ok(maxReaders >= 1 && maxReaders <= READERS + UPGRADERS);
    assertFree(rw);
  });
});

describe('RWLock upgradable read lock', () => {
  const UPGRADE_PENDING = { name: 'Error', code: 'ERR_PARKLOCK_UPGRADE_PENDING' };

  it('is a read hold named in the owner word: beside plain readers, one holder at a time', () => {
    const rw = new RWLock();
    const guard = rw.lockUpgradable();
    assert.deepEqual(words(rw), [UPGRADABLE | ONE_READER, threadId]);
    assert.equal(rw.isUpgradableLockedByCurrentThread, true);
    assert.equal(rw.upgrader, require('node:worker_threads').threadId);
    assert.equal(rw.writer, null);
    assert.equal(rw.readers, 1);
    assert.equal(rw.tryLockShared(), true, 'plain readers join');
    assert.equal(rw.readers, 2);
    assert.equal(rw.tryLockUpgradable(), false, 'a second upgradable hold is refused');
    assert.equal(rw.tryLock(), false);
    rw.unlockShared();
    guard.unlock();
    assert.equal(guard.released, true);
    assertFree(rw);
  });

  it('upgrade() of the only reader is one step; the guard then releases the write lock', () => {
    const rw = new RWLock();
    const guard = rw.lockUpgradable();
    rw.upgrade();
    assert.deepEqual(words(rw), [WRITER, threadId]);
    assert.equal(rw.isWriteLockedByCurrentThread, true);
    assert.equal(rw.isUpgradableLockedByCurrentThread, false);
    guard.unlock();
    assertFree(rw);
    // After upgrade() and downgrade() the guard releases the read hold it has become.
    const again = rw.lockUpgradable();
    assert.equal(rw.tryUpgrade(), true);
    rw.downgrade();
    assert.deepEqual(words(rw), [ONE_READER, 0]);
    again.unlock();
    assertFree(rw);
  });

  it('misuse throws with a code and changes nothing', async () => {
    const rw = new RWLock();
    assert.throws(() => rw.upgrade(), NOT_OWNER, 'upgrade() without the upgradable read lock');
    assert.throws(() => rw.tryUpgrade(), NOT_OWNER);
    await assert.rejects(rw.upgradeAsync(), NOT_OWNER);
    assert.throws(() => rw.unlockUpgradable(), NOT_OWNER);
    rw.lockShared();
    assert.throws(() => rw.upgrade(), NOT_OWNER, 'a plain read lock cannot be upgraded');
    rw.unlockShared();
    const write = rw.lock();
    assert.throws(() => rw.unlockUpgradable(), { code: 'ERR_PARKLOCK_NOT_OWNER', message: /use unlock\(\)/ });
    assert.throws(() => rw.lockUpgradable(), DEADLOCK);
    assert.equal(rw.tryLockUpgradable(), false);
    write.unlock();
    rw.lockUpgradable();
    assert.throws(() => rw.lock(), DEADLOCK, 'lock() would wait for this thread\'s own read hold');
    assert.throws(() => rw.lockUpgradable(), DEADLOCK);
    assert.equal(rw.tryLock(50), false);
    assert.equal(rw.tryLockUpgradable(50), false);
    assert.throws(() => rw.unlock(), { code: 'ERR_PARKLOCK_NOT_OWNER', message: /unlockUpgradable/ });
    assert.throws(() => rw.unlockShared(), { code: 'ERR_PARKLOCK_NOT_OWNER', message: /unlockUpgradable/ });
    assert.throws(() => rw.downgrade(), NOT_OWNER);
    assert.throws(() => rw.tryUpgrade(-1), RANGE_ERROR);
    assert.throws(() => rw.tryUpgrade('1'), TYPE_ERROR);
    assert.throws(() => rw.tryLockUpgradable(NaN), RANGE_ERROR);
    await assert.rejects(rw.upgradeAsync({ timeout: -1 }), RANGE_ERROR);
    await assert.rejects(rw.upgradeAsync(null), TYPE_ERROR);
    await assert.rejects(rw.lockUpgradableAsync({ signal: 1 }), TYPE_ERROR);
    assert.deepEqual(words(rw), [UPGRADABLE | ONE_READER, threadId], 'still the upgradable read lock');
    rw.unlockUpgradable();
    assertFree(rw);
  });

  it('lockUpgradableAsync resolves at once when available, and queues behind a holder', async () => {
    const rw = new RWLock();
    const first = await rw.lockUpgradableAsync({ timeout: 0 });
    const second = rw.lockUpgradableAsync();
    assert.equal(queued(rw), 1);
    assert.deepEqual(words(rw), [UPGRADABLE | ONE_READER | PARKED, threadId]);
    assert.equal(rw.tryLockShared(), false, 'once anybody waits, readers queue too');
    first.unlock();
    const guard = await withinLimit(second, 'queued lockUpgradableAsync');
    assert.deepEqual(words(rw), [UPGRADABLE | ONE_READER, threadId]);
    guard.unlock();
    assertFree(rw);
  });

  it('upgrade waits for a worker\'s read hold; no reader joins meanwhile', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const reader = await startAgent(rw);
    await reader.call('lockShared');
    const guard = rw.lockUpgradable();
    assert.equal(rw.tryUpgrade(), false, 'not alone');
    const upgraded = rw.upgradeAsync();
    assert.equal(draining(rw), 1);
    assert.deepEqual(words(rw), [UPGRADABLE | DRAINING | 2 * ONE_READER, threadId]);
    assert.equal(await reader.call('tryLockShared', { timeout: 0 }), false, 'a newcomer reader waits');
    assert.throws(() => rw.upgrade(), UPGRADE_PENDING);
    assert.throws(() => rw.unlockUpgradable(), UPGRADE_PENDING);
    assert.equal(await isSettled(upgraded), false);
    await reader.call('unlockShared');
    await withinLimit(upgraded, 'upgradeAsync');
    assert.deepEqual(words(rw), [WRITER, threadId]);
    assert.equal(draining(rw), 0);
    guard.unlock();
    assertFree(rw);
  });

  // A writer at the head of the queue refused beside readers (here: a downgrade) drains them.
  async function drainingWriter(rw, op) {
    const writer = await startAgent(rw);
    const late = await startAgent(rw);
    rw.lock();
    const writerLock = writer.send(op, { key: 'w' });
    await withinLimit(writerLock.started, 'writer starting');
    await waitFor(() => queued(rw) === 1, 'the writer to queue');
    const lateRead = late.send('lockShared');
    await withinLimit(lateRead.started, 'late reader starting');
    await waitFor(() => queued(rw) === 2, 'the late reader to queue behind the writer');
    rw.downgrade();
    await waitFor(() => draining(rw) === 1, 'the writer to drain');
    assert.deepEqual(words(rw), [DRAINING | PARKED | ONE_READER, 0]);
    assert.equal(queued(rw), 1, 'the late reader stays queued');
    assert.equal(rw.tryLockShared(), false, 'no reader joins a drain');
    assert.equal(rw.tryLock(), false);
    return { writer, writerLock, late, lateRead };
  }

  for (const op of ['lock', 'startLockAsync']) {
    it(`a writer (${op}) granted beside a read hold drains it, then has the lock before the readers behind it`, { timeout: 30_000 }, async () => {
      const rw = new RWLock();
      const { writer, writerLock, late, lateRead } = await drainingWriter(rw, op);
      rw.unlockShared();
      if (op === 'lock') {
        assert.equal(await withinLimit(writerLock.reply, 'writer'), true);
        assert.deepEqual(words(rw), [WRITER | PARKED, writer.threadId]);
        await writer.call('unlock');
      } else {
        assert.equal(await withinLimit(writer.call('settle', { key: 'w' }), 'lockAsync'), 'acquired');
      }
      assert.equal(await withinLimit(lateRead.reply, 'late reader'), true);
      assert.equal(draining(rw), 0);
      await late.call('unlockShared');
      assertFree(rw);
    });

    it(`terminate() of a draining writer (${op}) lets in the readers it kept out`, { timeout: 30_000 }, async () => {
      const rw = new RWLock();
      const { writer, late, lateRead } = await drainingWriter(rw, op);
      await withinLimit(writer.terminate(), 'terminate()');
      assert.equal(await withinLimit(lateRead.reply, 'late reader'), true, 'let in when the writer ended');
      assert.equal(draining(rw), 0);
      assert.deepEqual(words(rw), [2 * ONE_READER, 0]);
      rw.unlockShared();
      await late.call('unlockShared');
      assertFree(rw);
    });
  }

  it('a draining lockAsync that times out lets in the readers it kept out', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const reader = await startAgent(rw);
    rw.lock();
    const later = rw.lockAsync({ timeout: 100 });
    const lateRead = reader.send('lockShared');
    await withinLimit(lateRead.started, 'late reader starting');
    await waitFor(() => queued(rw) === 2, 'the reader to queue behind this thread\'s lockAsync');
    rw.downgrade();
    await waitFor(() => draining(rw) === 1, 'this thread\'s lockAsync to drain');
    await assert.rejects(withinLimit(later, 'lockAsync'), TimeoutError);
    assert.equal(await withinLimit(lateRead.reply, 'late reader'), true);
    assert.deepEqual(words(rw), [2 * ONE_READER, 0]);
    rw.unlockShared();
    await reader.call('unlockShared');
    assertFree(rw);
  });

  it('a blocking writer draining readers that times out lets in the readers it kept out', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const writer = await startAgent(rw);
    const first = rw.lockShared();
    const writerLock = writer.send('tryLock', { timeout: 1000 });
    await withinLimit(writerLock.started, 'writer starting');
    await waitFor(() => draining(rw) === 1, 'the writer to drain');
    const later = rw.lockSharedAsync();
    assert.equal(queued(rw), 1, 'a reader arriving after the writer waits');
    assert.deepEqual(words(rw), [ONE_READER | DRAINING | PARKED, 0]);
    assert.equal(await withinLimit(writerLock.reply, 'tryLock(timeout)'), false);
    const second = await withinLimit(later, 'reader behind the writer that gave up');
    assert.deepEqual(words(rw), [2 * ONE_READER, 0]);
    assert.equal(draining(rw), 0);
    first.unlock();
    second.unlock();
    assertFree(rw);
  });

  it('a worker\'s blocking upgrade() waits for this thread\'s read hold and comes before a queued writer', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const upgrader = await startAgent(rw);
    const writer = await startAgent(rw);
    const read = rw.lockShared();
    await upgrader.call('lockUpgradable');
    const writerLock = writer.send('lock');
    await withinLimit(writerLock.started, 'writer starting');
    await waitFor(() => queued(rw) === 1, 'the writer to park');
    const upgrade = upgrader.send('upgrade');
    await withinLimit(upgrade.started, 'upgrade starting');
    await waitFor(() => draining(rw) === 1, 'the upgrader to park');
    assert.deepEqual(words(rw), [UPGRADABLE | DRAINING | PARKED | 2 * ONE_READER, upgrader.threadId]);
    read.unlock();
    assert.equal(await withinLimit(upgrade.reply, 'upgrade'), true);
    assert.deepEqual(words(rw), [WRITER | PARKED, upgrader.threadId], 'upgraded ahead of the queued writer');
    await upgrader.call('unlock');
    assert.equal(await withinLimit(writerLock.reply, 'writer'), true);
    await writer.call('unlock');
    assertFree(rw);
  });

  it('an upgrade that times out keeps the upgradable hold and lets in the readers it kept out', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const reader = await startAgent(rw);
    const late = await startAgent(rw);
    await reader.call('lockShared');
    const guard = rw.lockUpgradable();
    const upgraded = rw.upgradeAsync({ timeout: 50 });
    const lateRead = late.send('lockShared');
    await withinLimit(lateRead.started, 'late reader starting');
    await waitFor(() => queued(rw) === 1, 'the late reader to queue behind the upgrade');
    await assert.rejects(withinLimit(upgraded, 'upgradeAsync'), TimeoutError);
    assert.equal(await withinLimit(lateRead.reply, 'late reader'), true, 'let in once the upgrade gave up');
    assert.deepEqual(words(rw), [UPGRADABLE | 3 * ONE_READER, threadId]);
    assert.equal(rw.tryUpgrade(30), false, 'the blocking form times out too');
    assert.deepEqual(words(rw), [UPGRADABLE | 3 * ONE_READER, threadId]);
    await reader.call('unlockShared');
    await late.call('unlockShared');
    assert.equal(rw.tryUpgrade(), true);
    guard.unlock();
    assertFree(rw);
  });

  it('an abort or cancelPendingWaits() ends a pending upgradeAsync and lockUpgradableAsync', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const reader = await startAgent(rw);
    await reader.call('lockShared');
    const guard = rw.lockUpgradable();
    const controller = new AbortController();
    const upgraded = rw.upgradeAsync({ signal: controller.signal });
    controller.abort(new Error('stop'));
    await assert.rejects(upgraded, /stop/);
    assert.deepEqual(words(rw), [UPGRADABLE | 2 * ONE_READER, threadId]);
    const again = rw.upgradeAsync();
    assert.equal(rw.cancelPendingWaits(), 1);
    await assert.rejects(again, { code: 'ERR_PARKLOCK_CANCELLED' });
    assert.deepEqual(words(rw), [UPGRADABLE | 2 * ONE_READER, threadId]);
    assert.equal(draining(rw), 0);
    guard.unlock();
    await reader.call('unlockUpgradable').catch(() => {});
    await reader.call('unlockShared');
    assertFree(rw);
  });

  it('terminate() of a worker blocked in upgrade() is prompt; its upgradable hold is then released', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const upgrader = await startAgent(rw);
    const read = rw.lockShared();
    await upgrader.call('lockUpgradable');
    const upgrade = upgrader.send('upgrade');
    await withinLimit(upgrade.started, 'upgrade starting');
    await waitFor(() => draining(rw) === 1, 'the upgrader to park');
    await withinLimit(upgrader.terminate(), 'terminate()');
    assert.equal(draining(rw), 0);
    read.unlock();
    // Nobody waited when it ended: the next acquirer on the slow path releases the hold.
    rw.lock().unlock();
    assertFree(rw);
  });

  it('terminate() of a worker whose upgradeAsync is pending ends the upgrade and lets in the readers it kept out', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const upgrader = await startAgent(rw);
    const late = await startAgent(rw);
    const read = rw.lockShared();
    await upgrader.call('lockUpgradable');
    await upgrader.call('startUpgradeAsync', { key: 'up' });
    await waitFor(() => draining(rw) === 1, 'the upgrade to queue');
    const lateRead = late.send('lockShared');
    await withinLimit(lateRead.started, 'late reader starting');
    await waitFor(() => queued(rw) === 1, 'the late reader to queue behind the upgrade');
    await withinLimit(upgrader.terminate(), 'terminate()');
    assert.equal(await withinLimit(lateRead.reply, 'late reader'), true, 'let in when the upgrader ended');
    assert.equal(draining(rw), 0, 'no upgrade left queued');
    assert.deepEqual(words(rw), [2 * ONE_READER, 0], 'the ended upgradable hold is released');
    read.unlock();
    await late.call('unlockShared');
    assertFree(rw);
  });

  it('a writer queued behind an upgradable holder that ends is let in', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const holder = await startAgent(rw);
    const writer = await startAgent(rw);
    await holder.call('lockUpgradable');
    const writerLock = writer.send('lock');
    await withinLimit(writerLock.started, 'writer starting');
    await waitFor(() => queued(rw) === 1, 'the writer to park');
    await withinLimit(holder.terminate(), 'terminate()');
    assert.equal(await withinLimit(writerLock.reply, 'writer'), true, 'no OwnerDiedError: a read changed nothing');
    await writer.call('unlock');
    assertFree(rw);
  });

  it('the next upgradable reader after a writer ended holding the lock gets OwnerDiedError holding the upgradable lock', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const writer = await startAgent(rw);
    const writerThread = writer.worker.threadId; // a worker's reads -1 once it has exited
    await writer.call('lock');
    await withinLimit(writer.terminate(), 'terminate()');
    assert.throws(() => rw.lockUpgradable(), { name: 'OwnerDiedError', threadId: writerThread });
    assert.equal(rw.isUpgradableLockedByCurrentThread, true);
    assert.equal(rw.readers, 1);
    rw.unlockUpgradable();
    assertFree(rw);
  });
});

describe('RWLock whose writer ended while holding the write lock', () => {
  const OWNER_DIED = { name: 'OwnerDiedError', code: 'ERR_PARKLOCK_OWNER_DIED' };

  // An agent that takes the write lock with `how` ('lock' or 'lockAsync') and holds it; `end()`
  // then ends its thread in the way named ('terminate', 'exit', 'throw' or 'return') and resolves
  // once it has exited. `threadId` is its Node threadId (a worker's reads -1 once it has exited).
  async function writerThatEnds(rw, how) {
    const agent = await startAgent(rw);
    const threadId = agent.worker.threadId;
    agent.worker.on('error', () => {}); // the 'throw' ending
    assert.equal(await agent.call(how), true);
    assert.deepEqual(words(rw), [WRITER, agent.threadId]);
    const end = async (ending) => {
      if (ending === 'terminate') await agent.terminate();
      else agent.send('end', { how: ending });
      await withinLimit(agent.exited, `the writer to end (${ending})`);
    };
    return { agent, threadId, end };
  }

  // Checks `error` is the report of `threadId`'s death, unlocks through its guard, and checks the
  // lock is an ordinary one again.
  function assertReportedAndRecover(rw, error, threadId, mode) {
    assert.ok(error instanceof OwnerDiedError, `an OwnerDiedError, not ${error}`);
    assert.equal(error.code, 'ERR_PARKLOCK_OWNER_DIED');
    assert.equal(error.threadId, threadId);
    if (mode === 'write') {
      assert.equal(rw.isWriteLockedByCurrentThread, true);
    } else {
      assert.equal(rw.isWriteLocked, false);
      assert.equal(rw.readers, 1);
    }
    error.guard.unlock();
    assert.equal(rw.isLocked, false);
    rw.lock().unlock();
    rw.lockShared().unlock();
    assertFree(rw);
  }

  for (const how of ['lock', 'lockAsync']) {
    for (const ending of ['terminate', 'exit', 'throw', 'return']) {
      it(`after the writer (${how}) ends by ${ending}, lock() throws OwnerDiedError holding the lock`, { timeout: 30_000 }, async () => {
        const rw = new RWLock();
        const { threadId, end } = await writerThatEnds(rw, how);
        await end(ending);
        const error = (() => {
          try {
            rw.lock();
          } catch (thrown) {
            return thrown;
          }
          return undefined;
        })();
        assertReportedAndRecover(rw, error, threadId, 'write');
      });
    }
  }

  const acquirers = [
    ['lockShared', 'read', (rw) => rw.lockShared()],
    ['tryLock(0)', 'write', (rw) => rw.tryLock()],
    ['tryLockShared(0)', 'read', (rw) => rw.tryLockShared()],
    ['tryLock(timeout)', 'write', (rw) => rw.tryLock(HANG_LIMIT_MS)],
    ['tryLockShared(timeout)', 'read', (rw) => rw.tryLockShared(HANG_LIMIT_MS)],
    ['lockAsync', 'write', (rw) => rw.lockAsync()],
    ['lockSharedAsync', 'read', (rw) => rw.lockSharedAsync()],
  ];
  for (const [name, mode, acquire] of acquirers) {
    it(`${name} after the writer ended reports it, holding the lock in its own mode`, { timeout: 30_000 }, async () => {
      const rw = new RWLock();
      const { threadId, end } = await writerThatEnds(rw, 'lock');
      await end('return');
      let error;
      try {
        await acquire(rw);
      } catch (thrown) {
        error = thrown;
      }
      assertReportedAndRecover(rw, error, threadId, mode);
    });
  }

  for (const ending of ['terminate', 'exit']) {
    it(`lockAsync() and lockSharedAsync() queued before the writer ends (${ending}) reject with OwnerDiedError`, { timeout: 30_000 }, async () => {
      const rw = new RWLock();
      const { threadId, end } = await writerThatEnds(rw, 'lockAsync');
      const writer = rw.lockAsync();
      const reader = rw.lockSharedAsync();
      writer.catch(() => {});
      reader.catch(() => {});
      assert.equal(queued(rw), 2);
      await end(ending);
      // The oldest waiter gets the lock and the report; the reader behind it then waits for it.
      const error = await withinLimit(writer.then(() => undefined, (thrown) => thrown), 'the queued lockAsync');
      assert.equal(await isSettled(reader), false);
      assert.ok(error instanceof OwnerDiedError);
      assert.equal(error.threadId, threadId);
      error.guard.unlock();
      const guard = await withinLimit(reader, 'the reader behind it, as an ordinary grant');
      guard.unlock();
      assertFree(rw);
    });
  }

  it('lock() blocked in another worker before the writer ends throws OwnerDiedError there, holding the lock', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const { end } = await writerThatEnds(rw, 'lock');
    const waiter = await startAgent(rw);
    const blocked = waiter.send('lock');
    await withinLimit(blocked.started, 'the waiter starting');
    await waitFor(() => queued(rw) === 1, 'the waiter to park');
    await end('exit');
    await assert.rejects(withinLimit(blocked.reply, 'the blocked lock()'), OWNER_DIED);
    assert.deepEqual(await waiter.call('state'), { isLocked: true, isWriteLocked: true, readers: 0, mine: true });
    await waiter.call('unlock');
    assertFree(rw);
  });
});

describe('RWLock: a thread blocking on a lock its own lockAsync waits for', () => {
  for (const blocking of ['tryLock', 'tryLockShared', 'lockShared']) {
    it(`${blocking}() gets ERR_PARKLOCK_DEADLOCK when the write lock is granted to that lockAsync`, { timeout: 30_000 }, async () => {
      const rw = new RWLock();
      const agent = await startAgent(rw);
      const holder = rw.lock();
      await agent.call('startLockAsync', { key: 'a' });
      const blocked = agent.send(blocking, { timeout: HANG_LIMIT_MS });
      await withinLimit(blocked.started, 'the worker to block');
      await waitFor(() => queued(rw) === 2, 'both waits of the worker to queue');
      holder.unlock(); // grants the oldest waiter: the worker's lockAsync, which cannot run yet
      // The blocked call notices that its own thread now holds the write lock and throws instead
      // of waiting forever.
      await assert.rejects(withinLimit(blocked.reply, `the blocked ${blocking}`), DEADLOCK);
      assert.equal(await agent.call('settle', { key: 'a' }), 'acquired');
      assertFree(rw);
    });
  }
});

describe('RWLock#waitForUnlock', () => {
  it('resolves at once, taking nothing, when the lock is free', async () => {
    const rw = new RWLock();
    assert.equal(await rw.waitForUnlock(), undefined);
    assert.equal(await rw.waitForUnlock({ timeout: 0 }), undefined);
    assertFree(rw);
  });

  it('rejects bad options and an aborted signal, locked in either mode or not, taking nothing', async () => {
    const rw = new RWLock();
    for (const take of [null, () => rw.lock(), () => rw.lockShared()]) {
      const holder = take?.();
      const before = words(rw);
      await assert.rejects(rw.waitForUnlock(null), TYPE_ERROR);
      await assert.rejects(rw.waitForUnlock({ timeout: -1 }), RANGE_ERROR);
      await assert.rejects(rw.waitForUnlock({ signal: {} }), TYPE_ERROR);
      const reason = new Error('aborted before');
      await assert.rejects(rw.waitForUnlock({ signal: AbortSignal.abort(reason) }), (e) => e === reason);
      assert.deepEqual(words(rw), before);
      assert.equal(queued(rw), 0);
      holder?.unlock();
    }
    await assert.rejects(RWLock.prototype.waitForUnlock.call({}), TYPE_ERROR);
    await assert.rejects(RWLock.prototype.waitForUnlock.call(new (require('../lib').Mutex)()), TYPE_ERROR);
    assertFree(rw);
  });

  for (const [mode, take, release] of [
    ['write', 'lock', 'unlock'],
    ['read', 'lockShared', 'unlockShared'],
  ]) {
    it(`resolves once a worker releases its ${mode} lock, without keeping the lock`, { timeout: 30_000 }, async () => {
      const rw = new RWLock();
      const agent = await startAgent(rw);
      await agent.call(take);
      const waiting = rw.waitForUnlock({ signal: testSignal() });
      await waitFor(() => queued(rw) === 1, 'the wait to queue');
      assert.equal(await isSettled(waiting), false);
      await agent.call(release);
      assert.equal(await withinLimit(waiting, 'waitForUnlock'), undefined);
      assert.equal(rw.isLocked, false);
      assert.equal(await agent.call('tryLock', { timeout: 0 }), true, 'the worker can take it again');
      await agent.call('unlock');
      assertFree(rw);
    });
  }

  it('waits for every reader, and readers arriving after it wait behind it', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const agent = await startAgent(rw);
    await agent.call('lockShared');
    const mine = rw.lockShared();
    const waiting = rw.waitForUnlock({ signal: testSignal() });
    await waitFor(() => queued(rw) === 1, 'the wait to queue');
    assert.equal(await agent.call('tryLockShared', { timeout: 0 }), false, 'a later reader queues behind it');
    await agent.call('unlockShared');
    assert.equal(await isSettled(waiting), false, 'still one reader');
    mine.unlock();
    await withinLimit(waiting, 'waitForUnlock');
    assertFree(rw);
  });

  it('takes its turn in the FIFO queue: a lockSharedAsync queued before it gets the lock first', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const agent = await startAgent(rw);
    await agent.call('lock');
    const order = [];
    const first = rw.lockSharedAsync({ signal: testSignal() }).then((guard) => {
      order.push('lockSharedAsync');
      return guard;
    });
    const unlocked = rw.waitForUnlock({ signal: testSignal() }).then(() => order.push('waitForUnlock'));
    await waitFor(() => queued(rw) === 2, 'both waits to queue');
    await agent.call('unlock');
    const guard = await withinLimit(first, 'the first lockSharedAsync');
    assert.equal(await isSettled(unlocked), false, 'still waiting while the reader holds it');
    guard.unlock();
    await withinLimit(unlocked, 'waitForUnlock');
    assert.deepEqual(order, ['lockSharedAsync', 'waitForUnlock']);
    assertFree(rw);
  });

  it('rejects with TimeoutError or signal.reason, leaving the worker holding the lock', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const agent = await startAgent(rw);
    await agent.call('lock');
    await assert.rejects(rw.waitForUnlock({ timeout: 10 }), { name: 'TimeoutError', code: 'ERR_PARKLOCK_TIMEOUT' });
    const controller = new AbortController();
    const waiting = rw.waitForUnlock({ signal: controller.signal });
    await waitFor(() => queued(rw) === 1, 'the wait to queue');
    const reason = new Error('stop waiting');
    controller.abort(reason);
    await assert.rejects(withinLimit(waiting, 'the aborted wait'), (e) => e === reason);
    assert.equal((await agent.call('state')).mine, true);
    assert.equal(queued(rw), 0);
    await agent.call('unlock');
    assertFree(rw);
  });

  for (const take of ['lockAsync', 'lockSharedAsync']) {
    it(`on a thread holding the lock (${take}), waits until another task releases it`, async () => {
      const rw = new RWLock();
      const holder = await rw[take]();
      const waiting = rw.waitForUnlock({ signal: testSignal() });
      assert.equal(await isSettled(waiting), false);
      setTimeout(() => holder.unlock(), 5); // another task of this thread
      await withinLimit(waiting, 'waitForUnlock');
      assertFree(rw);
    });
  }

  it('rejects with the OwnerDiedError when the writer ended, its guard holding the write lock', { timeout: 30_000 }, async () => {
    const rw = new RWLock();
    const agent = await startAgent(rw);
    await agent.call('lock');
    const owner = agent.worker.threadId;
    agent.send('end', { how: 'exit' });
    await withinLimit(agent.exited, 'the writer to exit');
    const error = await rw.waitForUnlock().then(
      () => assert.fail('resolved'),
      (e) => e,
    );
    assert.ok(error instanceof OwnerDiedError);
    assert.equal(error.threadId, owner);
    assert.equal(rw.isWriteLockedByCurrentThread, true, 'not unlocked behind the caller\'s back');
    error.guard.unlock();
    await rw.waitForUnlock();
    assertFree(rw);
  });
});

describe('RWLock#executeLocked and #executeShared', () => {
  it('run fn holding the write lock / a read lock, return its result, and always release', async () => {
    const rw = new RWLock();
    assert.equal(await rw.executeLocked(() => rw.isWriteLockedByCurrentThread), true);
    assert.equal(await rw.executeShared(() => rw.readers), 1);
    assert.equal(await rw.executeShared(async () => {
      await tick(1);
      return [rw.readers, rw.isWriteLocked];
    }).then(([readers, writing]) => readers === 1 && !writing), true);
    const error = new Error('fn failed');
    await assert.rejects(rw.executeLocked(() => {
      throw error;
    }), (e) => e === error);
    await assert.rejects(rw.executeShared(async () => {
      await tick(1);
      throw error;
    }), (e) => e === error);
    assertFree(rw);
  });

  it('on a free lock: take it in the call and run fn after the call returns, told { ownerDied: false }', async () => {
    const rw = new RWLock();
    for (const method of ['executeLocked', 'executeShared']) {
      const order = [];
      let argument;
      const result = rw[method]((told) => {
        order.push('fn');
        argument = told;
        return method;
      });
      order.push('after the call');
      assert.equal(method === 'executeLocked' ? rw.isWriteLockedByCurrentThread : rw.readers === 1, true);
      assert.equal(await result, method);
      assert.deepEqual(order, ['after the call', 'fn']);
      assert.deepEqual(argument, { ownerDied: false });
      assertFree(rw);
    }
  });

  it('readers run together; a writer runs alone', async () => {
    const rw = new RWLock();
    let readers = 0;
    let mostReaders = 0;
    let writerSawReaders = -1;
    const read = () => rw.executeShared(async () => {
      readers += 1;
      mostReaders = Math.max(mostReaders, readers);
      await tick(2);
      readers -= 1;
    }, { timeout: HANG_LIMIT_MS });
    const reads = [read(), read(), read()];
    const write = rw.executeLocked(() => {
      writerSawReaders = rw.readers;
    }, { timeout: HANG_LIMIT_MS });
    await withinLimit(Promise.all([...reads, write]), 'the readers and the writer');
    assert.equal(mostReaders, 3);
    assert.equal(writerSawReaders, 0);
    assertFree(rw);
  });

  it('reject a bad fn or bad options without taking the lock or calling fn', async () => {
    const rw = new RWLock();
    let calls = 0;
    const fn = () => calls++;
    for (const method of ['executeLocked', 'executeShared']) {
      for (const bad of [undefined, null, 'fn', {}]) await assert.rejects(rw[method](bad), TYPE_ERROR);
      await assert.rejects(rw[method](fn, { timeout: -1 }), RANGE_ERROR);
      await assert.rejects(rw[method](fn, 5), TYPE_ERROR);
    }
    assert.equal(calls, 0);
    assertFree(rw);
  });

  it('wait for a worker\'s write lock; a timeout rejects without calling fn', async () => {
    const rw = new RWLock();
    const agent = await startAgent(rw);
    await agent.call('lock');
    let calls = 0;
    await assert.rejects(rw.executeShared(() => calls++, { timeout: 10 }), { name: 'TimeoutError' });
    await assert.rejects(rw.executeLocked(() => calls++, { timeout: 10 }), { name: 'TimeoutError' });
    assert.equal(calls, 0);
    const shared = rw.executeShared(() => rw.readers, { timeout: HANG_LIMIT_MS });
    assert.equal(await isSettled(shared), false);
    await agent.call('unlock');
    assert.equal(await withinLimit(shared, 'executeShared'), 1);
    const exclusive = rw.executeLocked(() => 'written', { timeout: HANG_LIMIT_MS });
    assert.equal(await withinLimit(exclusive, 'executeLocked'), 'written');
    assertFree(rw);
  });

  for (const method of ['executeLocked', 'executeShared']) {
    it(`${method}: fn runs holding the lock, told that the writer ended holding it; the next call is not told`, { timeout: 30_000 }, async () => {
      const rw = new RWLock();
      const agent = await startAgent(rw);
      const writer = agent.worker.threadId;
      await agent.call('lock');
      await agent.terminate();
      const warned = new Promise((resolve) => process.once('warning', resolve));
      const told = await rw[method]((argument) => {
        if (method === 'executeLocked') assert.equal(rw.isWriteLockedByCurrentThread, true);
        else assert.equal(rw.readers, 1);
        return argument;
      });
      assert.deepEqual(told, { ownerDied: true, threadId: writer, pid: process.pid });
      const warning = await withinLimit(warned, 'the warning');
      assert.equal(warning.code, 'ERR_PARKLOCK_OWNER_DIED');
      assert.match(warning.message, new RegExp(`^RWLock\\.${method}\\(\\): .*\\(thread ${writer}\\)`));
      assertFree(rw);
      assert.deepEqual(await rw[method]((argument) => argument), { ownerDied: false });
      assertFree(rw);
    });
  }
});

describe('RWLock#cancelPendingWaits', () => {
  const { pendingWaitCount } = require('../lib/async_waits');

  it('rejects every pending wait of this thread behind a worker\'s write lock; nothing stays queued', async () => {
    const rw = new RWLock();
    const agent = await startAgent(rw);
    await agent.call('lock');
    let ran = 0;
    const waits = [
      rw.lockAsync(),
      rw.lockSharedAsync({ timeout: HANG_LIMIT_MS }),
      rw.executeLocked(() => ran++),
      rw.executeShared(() => ran++, { signal: new AbortController().signal }),
    ];
    await waitFor(() => queued(rw) === waits.length, 'every wait to queue');
    assert.equal(rw.cancelPendingWaits(), waits.length);
    for (const [i, wait] of waits.entries()) {
      await assert.rejects(withinLimit(wait, `wait #${i}`), { code: 'ERR_PARKLOCK_CANCELLED' });
    }
    assert.equal(ran, 0);
    assert.equal(queued(rw), 0, 'nothing stays queued');
    assert.equal(pendingWaitCount(rw), 0);
    assert.deepEqual(await agent.call('state'), { isLocked: true, isWriteLocked: true, readers: 0, mine: true });
    await agent.call('unlock');
    assert.equal(await rw.executeShared(() => 'usable'), 'usable');
    assertFree(rw);
  });
});
