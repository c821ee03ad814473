'use strict';
// A thread that ends while holding a Mutex: the lock is neither held forever nor silently freed.
// The next acquisition, in any thread and any form, takes it and reports the death with an
// OwnerDiedError whose guard holds the lock; waiters queued before the death are served too.
const { describe, it, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const { Worker } = require('node:worker_threads');
const { Mutex, Condition, OwnerDiedError } = require('../lib');
const {
  fixture,
  queued,
  assertClean,
  waitFor,
  withinLimit,
  testSignal,
  abortTestWaits,
  exitIfKeptAlive,
  agentsPerTest,
} = require('./helpers');

exitIfKeptAlive();
afterEach(abortTestWaits);
const startAgent = agentsPerTest(fixture('agent.js'), (...mutexes) => ({ mutexes }));

// Starts a worker that takes `mutex` (acquire: 'sync' | 'async') and ends holding it (`end`);
// resolves with { threadId, ended } once it holds the lock, `ended` resolving when it has exited.
async function holdAndEnd(mutex, acquire, end) {
  const worker = new Worker(fixture('lock_and_end.js'), {
    workerData: { lock: mutex, kind: 'mutex', acquire, end },
  });
  // Read now: once the worker has exited it reads -1, and a 'return' ending may be that quick.
  const { threadId } = worker;
  worker.on('error', () => {}); // the 'throw' ending is expected
  const ended = new Promise((resolve) => worker.once('exit', resolve));
  await withinLimit(new Promise((resolve) => worker.once('message', resolve)), 'the worker to lock');
  if (end === 'terminate') await worker.terminate();
  return { threadId, ended };
}

// `threadId`: the ended worker's Node threadId (a Worker's threadId reads -1 once it has exited).
function assertOwnerDied(error, threadId) {
  assert.ok(error instanceof OwnerDiedError, `expected an OwnerDiedError, got ${error}`);
  assert.equal(error.code, 'ERR_PARKLOCK_OWNER_DIED');
  assert.equal(error.threadId, threadId, 'the error names the ended thread');
  assert.equal(error.pid, process.pid, 'a thread of this process');
  assert.equal(error.guard.released, false, 'the guard holds the lock');
  return true;
}

describe('Mutex owner death: the next lock() reports it', () => {
  for (const end of ['terminate', 'exit', 'throw', 'return']) {
    for (const acquire of ['sync', 'async']) {
      it(`a worker that locks (${acquire}) and ends by ${end}`, { timeout: 30_000 }, async () => {
        const mutex = new Mutex();
        const { threadId, ended } = await holdAndEnd(mutex, acquire, end);
        await withinLimit(ended, 'the worker to end');
        assert.equal(mutex.isLocked, true, 'not silently freed');
        let caught;
        try {
          mutex.lock();
        } catch (error) {
          caught = error;
        }
        assertOwnerDied(caught, threadId);
        assert.equal(mutex.isHeldByCurrentThread, true);
        caught.guard.unlock();
        // From then on an ordinary lock.
        mutex.lock().unlock();
        assertClean(mutex);
      });
    }
  }

  it('tryLock() and tryLock(timeout) report it too', { timeout: 30_000 }, async () => {
    for (const timeout of [0, 5_000]) {
      const mutex = new Mutex();
      const { threadId, ended } = await holdAndEnd(mutex, 'sync', 'return');
      await withinLimit(ended, 'the worker to end');
      assert.throws(() => mutex.tryLock(timeout), (error) => assertOwnerDied(error, threadId));
      assert.equal(mutex.isHeldByCurrentThread, true);
      mutex.unlock();
      assertClean(mutex);
    }
  });

  it('lockAsync() after the death rejects with it; executeLocked() runs fn holding the lock and tells it', { timeout: 30_000 }, async () => {
    const mutex = new Mutex();
    const { threadId, ended } = await holdAndEnd(mutex, 'async', 'exit');
    await withinLimit(ended, 'the worker to end');
    const warned = new Promise((resolve) => process.once('warning', resolve));
    const told = await mutex.executeLocked((argument) => {
      assert.equal(mutex.isHeldByCurrentThread, true, 'fn runs holding the lock');
      return argument;
    });
    assert.deepEqual(told, { ownerDied: true, threadId, pid: process.pid });
    const warning = await withinLimit(warned, 'the warning');
    assert.equal(warning.code, 'ERR_PARKLOCK_OWNER_DIED');
    assert.equal(warning.name, 'OwnerDiedWarning');
    assertClean(mutex);
    assert.deepEqual(await mutex.executeLocked((argument) => argument), { ownerDied: false });

    const again = await holdAndEnd(mutex, 'sync', 'terminate');
    await withinLimit(again.ended, 'the worker to end');
    const rejected = await mutex.lockAsync().catch((e) => e);
    assertOwnerDied(rejected, again.threadId);
    rejected.guard.unlock();
    assertClean(mutex);
  });
  it('a guard this thread kept from an earlier hold stays apart from the OwnerDiedError\'s', { timeout: 30_000 }, async () => {
    // lock() hands out again a guard nothing has released through (mutex.js); the death's report
    // brings a guard of its own, and neither releases the other's hold.
    for (const form of ['lock', 'lockAsync']) {
      const mutex = new Mutex();
      const kept = mutex.lock();
      mutex.unlock(); // behind the guard's back: it is kept for the next acquisition
      const { threadId, ended } = await holdAndEnd(mutex, 'sync', 'terminate');
      await withinLimit(ended, 'the worker to end');
      let error;
      try {
        await mutex[form]();
      } catch (e) {
        error = e;
      }
      assertOwnerDied(error, threadId);
      assert.notStrictEqual(error.guard, kept, form);
      error.guard.unlock();
      assert.equal(mutex.isLocked, false, form);
      assert.strictEqual(mutex.lock(), kept, `${form}: an ordinary lock from then on`);
      kept.unlock();
      assert.equal(kept.released, true);
      assertClean(mutex);
    }
  });
});

describe('Mutex owner death: waiters queued before the death are served', () => {
  for (const end of ['terminate', 'exit', 'throw', 'return']) {
    it(`a pending lockAsync() here and a blocking lock() in another worker, owner ends by ${end}`, { timeout: 30_000 }, async () => {
      const mutex = new Mutex();
      const owner = await startAgent(mutex);
      const blocked = await startAgent(mutex);
      await owner.call('lock');
      const ownerId = owner.worker.threadId;
      const mine = mutex.lockAsync({ signal: testSignal() }).catch((e) => e);
      await waitFor(() => queued(mutex) === 1, 'this thread to queue');
      const blockedLock = blocked.send('lock');
      await withinLimit(blockedLock.started, 'the other worker to block');
      await waitFor(() => queued(mutex) === 2, 'the other worker to park');

      if (end === 'terminate') {
        await owner.terminate();
      } else {
        owner.send('end', { how: end });
        await withinLimit(owner.exited, 'the owner to end');
      }
      // The oldest waiter (this thread's) is handed the lock with the report.
      const first = await withinLimit(mine, 'the queued lockAsync');
      assertOwnerDied(first, ownerId);
      first.guard.unlock();
      // The blocked worker then gets an ordinary lock.
      assert.equal(await withinLimit(blockedLock.reply, 'the blocked lock()'), true);
      await blocked.call('unlock');
      assertClean(mutex);
    });
  }
});

describe('Condition#wait re-acquiring a mutex whose owner ended', () => {
  it('throws OwnerDiedError holding the mutex', { timeout: 30_000 }, async () => {
    const mutex = new Mutex();
    const condition = new Condition();
    const owner = await startAgent(mutex);
    const guard = mutex.lock();
    const waiting = condition.waitAsync(mutex, { signal: testSignal() }).catch((e) => e);
    // This thread released the mutex inside waitAsync; the worker takes it and notifies.
    await owner.call('lock');
    const ownerId = owner.worker.threadId;
    condition.notifyOne();
    await owner.terminate();
    const error = await withinLimit(waiting, 'the condition wait');
    assertOwnerDied(error, ownerId);
    assert.equal(mutex.isHeldByCurrentThread, true);
    guard.unlock();
    assertClean(mutex);
  });
});
