'use strict';
// A worker blocked in a synchronous wait is terminated, and in the same instant (0-5 ms later,
// inside the addon's termination-poll window) what it waits for is handed to it: the lock, the
// permit, the notification. For every primitive, nothing is lost: the lock ends up free, the
// permit available, the notification delivered to the next waiter.
const { describe, it, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const { Worker } = require('node:worker_threads');
const { Mutex, RWLock, Semaphore, Condition, futex } = require('../lib');
const native = require('../lib/native');
const { pendingCount } = require('../lib/async_waits');
const { fixture, queued, assertClean, waitFor, withinLimit, testSignal, abortTestWaits, exitIfKeptAlive, Agent } =
  require('./helpers');

exitIfKeptAlive();
afterEach(abortTestWaits);

const ROUNDS = 50;

function spinFor(ms) {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

function queuedOn(primitive) {
  return native.queuedCount(new Int32Array(primitive.buffer, primitive.byteOffset, 1), 0);
}

// termination was requested before the release, so the terminated worker never owned the lock:
// it is free, with no owner-death report.
function assertPassedOn(lock) {
  assert.equal(lock.tryLock(), true, 'the lock was handed on, not left to the terminated worker');
  lock.unlock();
}

// One round: `agent` has started `op` and blocks in it; terminates it and, `delay` ms later,
// calls `release()`; resolves once the worker has exited.
async function terminateRacingRelease(agent, op, parked, release, delay) {
  const started = agent.send(op.name, op.args).started;
  await withinLimit(started, `the worker to start ${op.name}`);
  await waitFor(parked, 'the worker to park');
  const terminated = agent.terminate();
  spinFor(delay);
  release();
  await withinLimit(terminated, 'terminate()');
}

describe('terminate() racing a hand-off to a blocked worker', () => {
  it(`Mutex#lock(): the lock is passed on (${ROUNDS} rounds)`, { timeout: 120_000 }, async () => {
    const mutex = new Mutex();
    for (let round = 0; round < ROUNDS; round++) {
      const agent = await Agent.launch(fixture('agent.js'), { mutexes: [mutex] });
      const guard = mutex.lock();
      await terminateRacingRelease(agent, { name: 'lock' }, () => queued(mutex) === 1, () => guard.unlock(), round % 6);
      await waitFor(() => queued(mutex) === 0, 'the waiter to leave');
      assertPassedOn(mutex);
      assertClean(mutex);
    }
  });

  for (const [label, op] of [
    ['RWLock#lock()', 'lock'],
    ['RWLock#lockShared()', 'lockShared'],
  ]) {
    it(`${label}: the lock is passed on (${ROUNDS} rounds)`, { timeout: 120_000 }, async () => {
      const rw = new RWLock();
      for (let round = 0; round < ROUNDS; round++) {
        const agent = await Agent.launch(fixture('rwlock_agent.js'), { lock: rw });
        const guard = rw.lock();
        await terminateRacingRelease(agent, { name: op }, () => queuedOn(rw) === 1, () => guard.unlock(), round % 6);
        await waitFor(() => queuedOn(rw) === 0, 'the waiter to leave');
        assertPassedOn(rw);
        assert.equal(rw.isLocked, false);
      }
    });
  }

  it(`Semaphore#acquire(): the permit is given back (${ROUNDS} rounds)`, { timeout: 120_000 }, async () => {
    const semaphore = new Semaphore(0);
    for (let round = 0; round < ROUNDS; round++) {
      const agent = await Agent.launch(fixture('semaphore_agent.js'), { semaphores: [semaphore] });
      await terminateRacingRelease(
        agent,
        { name: 'acquire', args: { n: 1 } },
        () => queuedOn(semaphore) === 1,
        () => semaphore.release(1),
        round % 6,
      );
      await waitFor(() => queuedOn(semaphore) === 0, 'the waiter to leave');
      assert.equal(semaphore.available, 1, 'the permit was not lost');
      assert.equal(semaphore.tryAcquire(1), true);
    }
  });

  it(`Condition#wait(): the notification reaches the next waiter (${ROUNDS} rounds)`, { timeout: 120_000 }, async () => {
    const mutex = new Mutex();
    const condition = new Condition();
    for (let round = 0; round < ROUNDS; round++) {
      const worker = new Worker(fixture('blocked_waiter.js'), { workerData: { kind: 'condition', mutex, condition } });
      await waitFor(() => queuedOn(condition) === 1, 'the worker to wait');
      const guard = mutex.lock();
      const mine = condition.waitAsync(mutex, { signal: testSignal() });
      const terminated = worker.terminate();
      spinFor(round % 6);
      assert.equal(condition.notifyOne(), 1, 'someone was notified');
      await withinLimit(terminated, 'terminate()');
      assert.equal(await withinLimit(mine, 'the live waiter to be notified'), true);
      guard.unlock();
      assert.equal(queuedOn(condition), 0);
      assertClean(mutex);
    }
  });

  it(`Condition#waitAsync() woken by notifyAll(): the mutex passes to the live waiter (${ROUNDS} rounds)`, { timeout: 120_000 }, async () => {
    const mutex = new Mutex();
    const condition = new Condition();
    for (let round = 0; round < ROUNDS; round++) {
      const worker = new Worker(fixture('blocked_waiter.js'), {
        workerData: { kind: 'condition-async', mutex, condition },
      });
      await waitFor(() => queuedOn(condition) === 1, 'the worker to wait');
      mutex.lock();
      const mine = condition.waitAsync(mutex, { signal: testSignal() });
      // Held while notifying, so that notifyAll() takes the path that would requeue.
      const guard = mutex.lock();
      const terminated = worker.terminate();
      spinFor(round % 6);
      // Promise waiters are woken, not moved: the worker's may reach a thread that is ending, or
      // may have left the queue with its thread already.
      const notified = condition.notifyAll();
      assert.ok(notified === 1 || notified === 2, `${notified} notified: the live waiter, and the worker's if still queued`);
      guard.unlock();
      await withinLimit(terminated, 'terminate()');
      assert.equal(await withinLimit(mine, 'the live waiter to be notified'), true);
      assert.ok(mutex.isHeldByCurrentThread, 'the live waiter resumes holding the mutex');
      mutex.unlock();
      assert.equal(queuedOn(condition), 0);
      await waitFor(() => queuedOn(mutex) === 0, 'nothing left queued on the mutex');
      assertClean(mutex);
    }
  });

  it(`futex.wait(): the notification reaches the next waiter (${ROUNDS} rounds)`, { timeout: 120_000 }, async () => {
    const memory = new SharedArrayBuffer(4);
    const word = new Int32Array(memory);
    for (let round = 0; round < ROUNDS; round++) {
      const worker = new Worker(fixture('blocked_waiter.js'), { workerData: { kind: 'futex', memory } });
      await waitFor(() => native.queuedCount(word, 0) === 1, 'the worker to wait');
      const mine = futex.waitAsync(word, 0, 0, { signal: testSignal() });
      const terminated = worker.terminate();
      spinFor(round % 6);
      assert.equal(futex.notify(word, 0, 1), 1, 'someone was notified');
      await withinLimit(terminated, 'terminate()');
      assert.equal(await withinLimit(mine, 'the live waiter to be notified'), 'ok');
      assert.equal(native.queuedCount(word, 0), 0);
      assert.equal(pendingCount(), 0);
    }
  });
});
