'use strict';
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { Worker } = require('node:worker_threads');
const { Mutex, Condition, TimeoutError, layouts } = require('../lib');
const native = require('../lib/native');
const { fixture, runWorkers, assertClean, waitFor, withinLimit, tick } = require('./helpers');

function conditionWord(condition) {
  return new Int32Array(condition.buffer, condition.byteOffset, 1);
}
function queuedOn(condition) {
  return native.queuedCount(conditionWord(condition), 0);
}

describe('Condition construction', () => {
  it('allocates, attaches and survives structured cloning', () => {
    const sab = new SharedArrayBuffer(16);
    const a = new Condition(sab, 4);
    const b = new Condition(structuredClone({ buffer: a.buffer, byteOffset: a.byteOffset }));
    new Int32Array(sab)[1] = 7;
    assert.equal(new Int32Array(b.buffer)[1], 7, 'the clone shares the same memory');
    assert.equal(b.byteOffset, 4);
    assert.equal(Condition.BYTES, layouts.condition.BYTES);
    assert.equal(Condition.ALIGN, layouts.condition.ALIGN);
    assert.equal(new Condition().buffer.byteLength, Condition.BYTES);
  });

  it('rejects bad locations with codes', () => {
    assert.throws(() => new Condition(new ArrayBuffer(4)), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => new Condition('x'), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => new Condition(new SharedArrayBuffer(8), 2), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => new Condition(new SharedArrayBuffer(8), 8), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
  });
});

describe('Condition#wait()', () => {
  it('requires a Mutex held by this thread', () => {
    const c = new Condition();
    const m = new Mutex();
    assert.throws(() => c.wait({}), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => c.wait(m), { code: 'ERR_PARKLOCK_NOT_OWNER' });
    m.lock();
    assert.throws(() => c.wait(m, -1), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => c.wait(m, NaN), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => c.wait(m, '5'), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    assert.ok(m.isHeldByCurrentThread, 'a rejected call leaves the mutex held');
    m.unlock();
    assertClean(m);
  });

  it('returns false on timeout, holding the mutex again', () => {
    const c = new Condition();
    const m = new Mutex();
    m.lock();
    assert.equal(c.wait(m, 5), false);
    assert.ok(m.isHeldByCurrentThread);
    m.unlock();
    assert.equal(queuedOn(c), 0);
    assertClean(m);
  });

  it('a worker blocked in wait() is released by terminate() and leaves the queue', async () => {
    const m = new Mutex();
    const c = new Condition();
    const worker = new Worker(fixture('blocked_waiter.js'), {
      workerData: { kind: 'condition', mutex: m, condition: c },
    });
    await new Promise((resolve) => worker.once('message', resolve));
    await waitFor(() => queuedOn(c) === 1, 'the worker queued on the condition');
    const started = Date.now();
    await withinLimit(worker.terminate(), 'terminate()');
    assert.ok(Date.now() - started < 2000, 'terminate() finished promptly');
    assert.equal(queuedOn(c), 0);
    assertClean(m);
  });
});

describe('Condition#waitAsync()', () => {
  it('resolves true when notified and false on timeout, holding the mutex each time', async () => {
    const c = new Condition();
    const m = new Mutex();
    await m.lockAsync();
    const waiting = c.waitAsync(m);
    assert.equal(m.isLocked, false, 'the mutex was released while waiting');
    await m.lockAsync();
    assert.equal(c.notifyOne(), 1);
    m.unlock();
    assert.equal(await waiting, true);
    assert.ok(m.isHeldByCurrentThread);
    assert.equal(await c.waitAsync(m, { timeout: 5 }), false);
    assert.ok(m.isHeldByCurrentThread);
    m.unlock();
    assert.equal(queuedOn(c), 0);
    assertClean(m);
  });

  it('rejects with signal.reason on abort, holding the mutex again', async () => {
    const c = new Condition();
    const m = new Mutex();
    m.lock();
    const controller = new AbortController();
    const waiting = c.waitAsync(m, { signal: controller.signal });
    const reason = new Error('stop');
    controller.abort(reason);
    await assert.rejects(waiting, (error) => error === reason);
    assert.ok(m.isHeldByCurrentThread);
    m.unlock();
    const aborted = AbortSignal.abort(new Error('already'));
    m.lock();
    await assert.rejects(c.waitAsync(m, { signal: aborted }), /already/);
    m.unlock();
    assertClean(m);
  });

  it('waitAsync rejects bad arguments (never throwing)', async () => {
    const c = new Condition();
    const m = new Mutex();
    await assert.rejects(c.waitAsync(m), { code: 'ERR_PARKLOCK_NOT_OWNER' });
    m.lock();
    await assert.rejects(c.waitAsync(m, { timeout: -1 }), { code: 'ERR_OUT_OF_RANGE' });
    await assert.rejects(c.waitAsync(m, { signal: {} }), { code: 'ERR_INVALID_ARG_TYPE' });
    await assert.rejects(c.waitAsync(m, 5), { code: 'ERR_INVALID_ARG_TYPE' });
    m.unlock();
    assertClean(m);
  });

  it('TimeoutError is not used: a timed-out wait resolves false', async () => {
    const c = new Condition();
    const m = new Mutex();
    m.lock();
    const result = await c.waitAsync(m, { timeout: 1 }).catch((e) => e);
    assert.equal(result instanceof TimeoutError, false);
    assert.equal(result, false);
    m.unlock();
  });

  it('a guard held across the wait still releases the hold it resumes with, whatever other tasks of the thread took meanwhile', async () => {
    // The mutex hands out its guard again while nothing has released through it (mutex.js); the
    // wait releases the mutex without doing so, and the waiter's guard must stay its own.
    const c = new Condition();
    const m = new Mutex();
    const guard = m.lock();
    const waiting = c.waitAsync(m);
    const meanwhile = m.lock(); // another task of this thread, while the waiter waits
    assert.notStrictEqual(meanwhile, guard, 'the waiter still holds its guard');
    c.notifyAll();
    meanwhile.unlock();
    assert.equal(await withinLimit(waiting, 'the notified wait'), true);
    assert.equal(m.isHeldByCurrentThread, true);
    assert.equal(guard.released, false);
    guard.unlock();
    assert.equal(m.isLocked, false, "the waiter's guard released the hold it resumed with");
    assertClean(m);
    // The blocking form leaves the guard to its holder the same way.
    const blocking = m.lock();
    assert.equal(c.wait(m, 1), false);
    blocking.unlock();
    assert.equal(m.isLocked, false);
    assertClean(m);
  });
});

describe('Condition#notifyOne() / notifyAll()', () => {
  it('return 0 without entering the addon when nobody waits', () => {
    const c = new Condition();
    assert.equal(c.notifyOne(), 0);
    assert.equal(c.notifyAll(), 0);
    assert.equal(Atomics.load(conditionWord(c), 0), layouts.condition.NO_WAITERS);
  });

  it('notifyAll while holding the mutex wakes Promise waiters, which queue for the mutex', async () => {
    const c = new Condition();
    const m = new Mutex();
    const queuedOnMutex = () => native.queuedCount(new Int32Array(m.buffer, m.byteOffset, 1), 0);
    const waits = [];
    for (let i = 0; i < 5; i++) {
      await m.lockAsync();
      waits.push(c.waitAsync(m));
    }
    assert.equal(queuedOn(c), 5);
    m.lock();
    assert.equal(c.notifyAll(), 5);
    assert.equal(queuedOn(c), 0);
    // Woken, not moved: each finds the mutex held when its wake-up is delivered, and queues.
    await waitFor(() => queuedOnMutex() === 5, 'the woken waiters to queue for the mutex');
    m.unlock();
    for (const w of waits) {
      assert.equal(await w, true);
      assert.ok(m.isHeldByCurrentThread, 'each waiter resumes holding the mutex');
      m.unlock();
      await tick();
    }
    assertClean(m);
  });
});

describe('Condition notifications racing timeouts and aborts', () => {
  // Every notification a notify call reports is received: a waiter that notifyOne()/notifyAll()
  // counted resolves true even if its timeout fires or its signal aborts while it re-locks the
  // mutex (notified wins); one that left before the notify is not counted.
  it('notifyOne()/notifyAll() counts match the waits that resolve true, exactly', { timeout: 60_000 }, async () => {
    const m = new Mutex();
    const c = new Condition();
    let reported = 0;
    let received = 0;
    for (let round = 0; round < 400; round++) {
      const controllers = [];
      const waits = [];
      for (let i = 0; i < 3; i++) {
        const controller = new AbortController();
        controllers.push(controller);
        m.lock();
        const options = i === 0 ? { timeout: round % 3 } : { signal: controller.signal };
        waits.push(
          c.waitAsync(m, options).then(
            (notified) => {
              m.unlock();
              return notified;
            },
            (error) => {
              m.unlock();
              return error;
            },
          ),
        );
      }
      // Let the timeout race the notify, then notify with the mutex held (the waiters move onto
      // it) or free (they compete), and abort one of them at once, while it re-locks.
      if (round % 2 === 0) await tick(round % 3);
      const holding = round % 4 < 2;
      if (holding) m.lock();
      reported += round % 3 === 0 ? c.notifyAll() : c.notifyOne();
      if (holding) m.unlock();
      controllers[1 + (round % 2)].abort(new Error('aborted'));
      controllers[2 - (round % 2)].abort(new Error('aborted'));
      const outcomes = await withinLimit(Promise.all(waits), 'the waits to end');
      received += outcomes.filter((outcome) => outcome === true).length;
      assert.equal(queuedOn(c), 0, 'nobody is left waiting');
    }
    assert.equal(received, reported, 'every notification reported by notify was received');
    assertClean(m);
  });

  it('a blocking wait() re-locking a mutex its own lockAsync was handed reports ERR_PARKLOCK_DEADLOCK', { timeout: 30_000 }, async () => {
    const m = new Mutex();
    const c = new Condition();
    const worker = new Worker(fixture('condition_self_deadlock.js'), { workerData: { mutex: m, condition: c } });
    const result = new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    assert.equal(await withinLimit(result, 'the worker to report'), 'ERR_PARKLOCK_DEADLOCK');
    await worker.terminate();
  });
});

describe('Condition with workers', () => {
  const variants = [
    { name: 'blocking waits', async: false, timeouts: false },
    { name: 'Promise waits', async: true, timeouts: false },
    { name: 'mixed, with 1 ms timeouts racing notifications', async: 'mixed', timeouts: true },
  ];
  for (const variant of variants) {
    it(`a bounded queue passes every item exactly once (${variant.name})`, async () => {
      const m = new Mutex();
      const notEmpty = new Condition();
      const notFull = new Condition();
      const capacity = 3;
      const producers = 2;
      const items = 3000;
      const total = producers * items;
      const memory = new SharedArrayBuffer(4 * (3 + capacity));
      const roles = ['producer', 'producer', 'consumer', 'consumer', 'consumer'];
      await runWorkers(
        fixture('condition_queue.js'),
        roles.map((role, i) => ({
          mutex: m, notEmpty, notFull, memory, role, items, capacity, total,
          async: variant.async === 'mixed' ? i % 2 === 0 : variant.async,
          timeouts: variant.timeouts,
        })),
      );
      const q = new Int32Array(memory);
      assert.equal(q[1], total, 'every item consumed once');
      assert.equal(q[2], producers * ((items * (items + 1)) / 2), 'the consumed values add up');
      assert.equal(q[0], 0);
      assert.equal(queuedOn(notEmpty), 0);
      assert.equal(queuedOn(notFull), 0);
      assertClean(m);
    });
  }
});

describe('Condition#cancelPendingWaits', () => {
  const { pendingWaitCount } = require('../lib/async_waits');

  it('rejects the pending waits with the reason, each holding the mutex again', async () => {
    const m = new Mutex();
    const c = new Condition();
    await m.lockAsync();
    const waiting = c.waitAsync(m); // releases the mutex while it waits
    assert.equal(m.isLocked, false);
    assert.equal(queuedOn(c), 1);
    const reason = new Error('cancelled');
    assert.equal(c.cancelPendingWaits(reason), 1);
    await assert.rejects(withinLimit(waiting, 'the cancelled wait'), (e) => e === reason);
    assert.equal(m.isHeldByCurrentThread, true, 'the mutex is held again, as after an abort');
    assert.equal(queuedOn(c), 0);
    assert.equal(pendingWaitCount(c), 0);
    assert.equal(c.notifyOne(), 0, 'nobody waits any more');
    m.unlock();
    assertClean(m);
  });

  it('rejects with ERR_PARKLOCK_CANCELLED by default and returns 0 when nothing waits', async () => {
    const m = new Mutex();
    const c = new Condition();
    assert.equal(c.cancelPendingWaits(), 0);
    await m.lockAsync();
    const waiting = c.waitAsync(m, { timeout: 60_000 });
    assert.equal(c.cancelPendingWaits(), 1);
    await assert.rejects(waiting, { code: 'ERR_PARKLOCK_CANCELLED' });
    m.unlock();
    assertClean(m);
  });
});
