'use strict';
// Latch: construction and attachment, every bad input, the blocking, Promise and try forms on one
// thread, and real workers counting down while others wait (sync and async), a stress of waits
// with tiny timeouts and aborts racing the release, and terminate() of a blocked worker.
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { Worker } = require('node:worker_threads');
const { Latch, layouts } = require('../lib');
const native = require('../lib/native');
const { pendingCount } = require('../lib/async_waits');
const { fixture, runWorkers, withinLimit, waitFor, isSettled, exitIfKeptAlive } = require('./helpers');

exitIfKeptAlive();

const { COUNT_INDEX, MAX_COUNT } = layouts.latch;
const TYPE_ERROR = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' };
const RANGE_ERROR = { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' };
const CORRUPT = { code: 'ERR_PARKLOCK_CORRUPT' };

function wordOf(latch) {
  return new Int32Array(latch.buffer, latch.byteOffset, layouts.latch.WORDS);
}
function queued(latch) {
  return native.queuedCount(wordOf(latch), COUNT_INDEX);
}
// Nobody left waiting on the latch, and no asynchronous wait left pending on this thread.
function assertNoWaiters(latch) {
  assert.equal(queued(latch), 0, 'no waiter is left in the parking lot');
  assert.equal(pendingCount(), 0, 'no asynchronous wait is left pending on this thread');
}

describe('construction', () => {
  it('new Latch(count) allocates its own memory holding the count', () => {
    const latch = new Latch(3);
    assert.ok(latch.buffer instanceof SharedArrayBuffer);
    assert.equal(latch.buffer.byteLength, Latch.BYTES);
    assert.equal(Latch.BYTES, layouts.latch.BYTES);
    assert.equal(Latch.ALIGN, layouts.latch.ALIGN);
    assert.equal(latch.byteOffset, 0);
    assert.equal(latch.count, 3);
    assert.equal(Atomics.load(wordOf(latch), COUNT_INDEX), 3);
    assert.deepEqual(Object.keys(latch), ['buffer', 'byteOffset'], 'only the location is enumerable');
    assert.notEqual(new Latch(3).buffer, latch.buffer);
  });

  it('new Latch(0) and zeroed memory are open latches', () => {
    assert.equal(new Latch(0).tryWait(), true);
    const latch = new Latch(new SharedArrayBuffer(8), 4);
    assert.equal(latch.count, 0);
    assert.equal(latch.tryWait(), true);
    assert.equal(latch.wait(), true);
  });

  it('the largest count is 2^31 - 1', () => {
    assert.equal(MAX_COUNT, 2 ** 31 - 1);
    const latch = new Latch(MAX_COUNT);
    assert.equal(latch.count, MAX_COUNT);
    latch.countDown(MAX_COUNT);
    assert.equal(latch.tryWait(), true);
  });

  it('Latch.init writes the count at the location and nothing else; the attach forms share it', () => {
    const sab = new SharedArrayBuffer(16);
    const all = new Int32Array(sab);
    const latch = Latch.init(sab, 8, 5);
    assert.ok(latch instanceof Latch);
    assert.equal(latch.byteOffset, 8);
    assert.deepEqual(Array.from(all), [0, 0, 5, 0]);
    const views = [new Latch(sab, 8), new Latch({ buffer: sab, byteOffset: 8 }), new Latch(structuredClone(latch))];
    views[0].countDown(2);
    for (const view of [latch, ...views]) assert.equal(view.count, 3);
    views[2].countDown(3);
    assert.equal(latch.tryWait(), true);
    assert.deepEqual(Array.from(all), [0, 0, 0, 0]);
    assert.equal(Latch.init(sab, undefined, 1).byteOffset, 0, 'byteOffset defaults to 0');
    assert.equal(all[0], 1);
  });
});

describe('bad input', () => {
  it('the constructor rejects a missing, non-integer or out-of-range count', () => {
    assert.throws(() => new Latch(), TYPE_ERROR);
    for (const count of [-1, 1.5, NaN, Infinity, -Infinity, MAX_COUNT + 1, 2 ** 32]) {
      assert.throws(() => new Latch(count), RANGE_ERROR, `count ${count}`);
    }
    for (const value of ['3', null, true, 3n, Symbol('x'), () => {}, new ArrayBuffer(4), new Int32Array(new SharedArrayBuffer(4))]) {
      assert.throws(() => new Latch(value), TYPE_ERROR, `new Latch(${String(value)})`);
    }
  });

  it('the attach forms reject bad memory and offsets without touching it', () => {
    const sab = new SharedArrayBuffer(8);
    for (const offset of [1, 2, -4, 0.5, NaN, 8, 12]) {
      assert.throws(() => new Latch(sab, offset), RANGE_ERROR, `byteOffset ${offset}`);
      assert.throws(() => new Latch({ buffer: sab, byteOffset: offset }), RANGE_ERROR);
    }
    assert.throws(() => new Latch(sab, '4'), TYPE_ERROR);
    assert.throws(() => new Latch({ buffer: new ArrayBuffer(4) }), TYPE_ERROR);
    assert.throws(() => new Latch({ buffer: sab, byteOffset: 0 }, 4), TYPE_ERROR);
    assert.deepEqual(Array.from(new Int32Array(sab)), [0, 0]);
  });

  it('Latch.init checks every argument before writing', () => {
    const sab = new SharedArrayBuffer(8);
    assert.throws(() => Latch.init(undefined, 0, 1), TYPE_ERROR);
    assert.throws(() => Latch.init(new ArrayBuffer(8), 0, 1), TYPE_ERROR);
    assert.throws(() => Latch.init(sab, 0), TYPE_ERROR);
    assert.throws(() => Latch.init(sab, 0, '1'), TYPE_ERROR);
    assert.throws(() => Latch.init(sab, 0, -1), RANGE_ERROR);
    assert.throws(() => Latch.init(sab, 0, 0.5), RANGE_ERROR);
    assert.throws(() => Latch.init(sab, 2, 1), RANGE_ERROR);
    assert.throws(() => Latch.init(sab, 8, 1), RANGE_ERROR);
    assert.deepEqual(Array.from(new Int32Array(sab)), [0, 0]);
  });

  it('countDown rejects a non-number, a non-positive or fractional n, and more than is left', () => {
    const latch = new Latch(3);
    for (const n of ['1', null, 1n, {}]) assert.throws(() => latch.countDown(n), TYPE_ERROR, `n ${String(n)}`);
    for (const n of [0, -1, 0.5, 1.5, NaN, Infinity, -Infinity]) {
      assert.throws(() => latch.countDown(n), RANGE_ERROR, `n ${n}`);
    }
    assert.throws(() => latch.countDown(4), { ...RANGE_ERROR, message: /remaining count \(3\)/ });
    assert.equal(latch.count, 3, 'refused count-downs change nothing');
    latch.countDown(3);
    assert.throws(() => latch.countDown(), RANGE_ERROR, 'an open latch has nothing left to count down');
    assert.equal(latch.count, 0);
  });

  it('wait throws and waitAsync rejects on bad timeouts and options', async () => {
    const latch = new Latch(1);
    for (const timeout of [-1, NaN, -Infinity]) {
      assert.throws(() => latch.wait(timeout), RANGE_ERROR);
      await assert.rejects(latch.waitAsync({ timeout }), RANGE_ERROR);
    }
    for (const timeout of ['5', null, 5n]) {
      assert.throws(() => latch.wait(timeout), TYPE_ERROR);
      await assert.rejects(latch.waitAsync({ timeout }), TYPE_ERROR);
    }
    for (const options of [null, 5, 'x']) await assert.rejects(latch.waitAsync(options), TYPE_ERROR);
    for (const signal of [null, {}, 'signal', new EventTarget()]) {
      await assert.rejects(latch.waitAsync({ signal }), TYPE_ERROR);
    }
    assert.equal(latch.count, 1);
    assertNoWaiters(latch);
  });

  it('a negative word is corrupt: every operation says so and none waits', async () => {
    const sab = new SharedArrayBuffer(4);
    const latch = new Latch(sab);
    for (const bad of [-1, -(2 ** 31)]) {
      new Int32Array(sab)[0] = bad;
      assert.throws(() => latch.count, CORRUPT);
      assert.throws(() => latch.tryWait(), CORRUPT);
      assert.throws(() => latch.countDown(), CORRUPT);
      assert.throws(() => latch.wait(), CORRUPT);
      await assert.rejects(withinLimit(latch.waitAsync(), 'waitAsync on a corrupt word'), CORRUPT);
      assert.throws(() => new Latch(sab), CORRUPT, 'attaching checks the word');
      assert.equal(new Int32Array(sab)[0], bad);
    }
    assertNoWaiters(latch);
  });
});

describe('one thread', () => {
  it('countDown, count and tryWait', () => {
    const latch = new Latch(4);
    latch.countDown();
    assert.equal(latch.count, 3);
    assert.equal(latch.tryWait(), false);
    latch.countDown(2);
    assert.equal(latch.count, 1);
    latch.countDown(1);
    assert.equal(latch.count, 0);
    assert.equal(latch.tryWait(), true);
  });

  it('wait(timeout) returns false while closed and true once open', () => {
    const latch = new Latch(1);
    assert.equal(latch.wait(0), false);
    assert.equal(latch.wait(5), false);
    assertNoWaiters(latch);
    latch.countDown();
    assert.equal(latch.wait(0), true);
    assert.equal(latch.wait(), true);
  });

  it('waitAsync resolves true once a count-down opens the latch, false on timeout', async () => {
    const latch = new Latch(2);
    assert.equal(await withinLimit(latch.waitAsync({ timeout: 0 }), 'waitAsync timeout 0'), false);
    assert.equal(await withinLimit(latch.waitAsync({ timeout: 5 }), 'waitAsync timeout 5'), false);
    assertNoWaiters(latch);

    const waits = [latch.waitAsync(), latch.waitAsync({ timeout: 60_000 })];
    assert.equal(queued(latch), 2);
    latch.countDown();
    assert.equal(await isSettled(waits[0]), false, 'a count-down that leaves 1 releases nobody');
    assert.equal(queued(latch), 2);
    latch.countDown();
    assert.deepEqual(await withinLimit(Promise.all(waits), 'released waitAsync'), [true, true]);
    assert.equal(await latch.waitAsync(), true, 'an open latch resolves at once');
    assertNoWaiters(latch);
  });

  it('an abort rejects with signal.reason and removes the waiter; an aborted signal rejects at once', async () => {
    const latch = new Latch(1);
    const controller = new AbortController();
    const promise = latch.waitAsync({ signal: controller.signal });
    assert.equal(queued(latch), 1);
    const reason = new Error('stop');
    controller.abort(reason);
    await assert.rejects(withinLimit(promise, 'aborted waitAsync'), (error) => error === reason);
    assertNoWaiters(latch);

    const aborted = AbortSignal.abort();
    await assert.rejects(latch.waitAsync({ signal: aborted }), (error) => error === aborted.reason);
    latch.countDown();
    await assert.rejects(latch.waitAsync({ signal: aborted }), (error) => error === aborted.reason);
    assertNoWaiters(latch);
  });

  it('an abort after the release has no effect', async () => {
    const latch = new Latch(1);
    const controller = new AbortController();
    const promise = latch.waitAsync({ signal: controller.signal });
    latch.countDown();
    controller.abort(); // the wake-up is already on its way: the waiter reports it
    assert.equal(await withinLimit(promise, 'waitAsync released before its abort'), true);
    assertNoWaiters(latch);
  });
});

describe('workers', () => {
  it('counters in workers release every sync and async waiter, each seeing every counter\'s write', { timeout: 60_000 }, async () => {
    const counters = 4;
    const steps = [1, 2, 3, 4];
    const latch = new Latch(steps.reduce((a, b) => a + b));
    const gate = new Latch(1);
    const slots = new SharedArrayBuffer(4 * counters);
    const common = { latch, gate, slots, counters };
    const roles = [
      ...steps.map((n, index) => ({ ...common, role: 'count', index, n })),
      ...[0, 1, 2].map(() => ({ ...common, role: 'wait' })),
      ...[0, 1, 2].map(() => ({ ...common, role: 'waitAsync' })),
    ];
    const mine = latch.waitAsync();
    const run = runWorkers(fixture('latch_roles.js'), roles, { limit: 45_000 });
    // Every waiter (six workers and this thread) is parked before the counters may start.
    await waitFor(() => queued(latch) === 7, 'all waiters parked');
    assert.equal(latch.count, 10);
    gate.countDown();
    assert.equal(await withinLimit(mine, 'main thread waitAsync'), true);
    const results = await run;
    assert.equal(results.length, roles.length);
    assert.deepEqual(Array.from(new Int32Array(slots)), [1, 2, 3, 4]);
    assert.equal(latch.count, 0);
    assertNoWaiters(latch);
    assertNoWaiters(gate);
  });

  it('stress: count-downs racing waits with tiny timeouts and aborts lose no release', { timeout: 60_000 }, async () => {
    const workers = 4;
    const share = 300;
    for (let round = 0; round < 3; round++) {
      const latch = new Latch(workers * share);
      const datas = Array.from({ length: workers }, (_, i) => ({ latch, share, seed: 7919 * (i + 1) + round }));
      const results = await runWorkers(fixture('latch_stress.js'), datas, { limit: 45_000 });
      const total = results.reduce((sum, { stats }) => sum + stats.countDowns, 0);
      assert.ok(total >= workers, `${total} count-downs`);
      assert.equal(latch.count, 0);
      assertNoWaiters(latch);
    }
  });

  for (const mode of ['wait', 'waitAsync']) {
    it(`terminate() ends a worker blocked in ${mode}() and its waiter leaves the queue`, { timeout: 30_000 }, async () => {
      const latch = new Latch(1);
      const worker = new Worker(fixture('latch_blocked.js'), { workerData: { latch, mode } });
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      let returned = false;
      worker.on('message', (message) => {
        if (message.type === 'returned') returned = true;
      });
      await waitFor(() => queued(latch) === 1, `worker parked in ${mode}()`);
      const start = Date.now();
      await withinLimit(worker.terminate(), 'terminate()');
      await withinLimit(exited, 'worker exit');
      assert.ok(Date.now() - start < 2000, `terminate() took ${Date.now() - start} ms`);
      assert.equal(returned, false);
      await waitFor(() => queued(latch) === 0, 'the terminated waiter left the queue');
      // The latch is untouched and still works for everyone else.
      assert.equal(latch.count, 1);
      const waiting = latch.waitAsync();
      latch.countDown();
      assert.equal(await withinLimit(waiting, 'waitAsync after the terminate'), true);
      assertNoWaiters(latch);
    });
  }
});

describe('cancelPendingWaits', () => {
  const { pendingWaitCount } = require('../lib/async_waits');

  it('rejects the pending waits; the latch still opens for later waits, counted down by a worker', async () => {
    const latch = new Latch(1);
    const waits = [latch.waitAsync(), latch.waitAsync({ timeout: 60_000 }), latch.waitAsync({ signal: new AbortController().signal })];
    await waitFor(() => queued(latch) === 3, 'the waits to queue');
    const reason = new Error('cancelled');
    assert.equal(latch.cancelPendingWaits(reason), 3);
    for (const wait of waits) await assert.rejects(withinLimit(wait, 'a cancelled wait'), (e) => e === reason);
    assertNoWaiters(latch);
    assert.equal(pendingWaitCount(latch), 0);
    assert.equal(latch.cancelPendingWaits(), 0);
    const later = latch.waitAsync({ timeout: 60_000 });
    const worker = new Worker(
      "const { Latch } = require(process.argv[2]); new Latch(require('node:worker_threads').workerData).countDown();",
      { eval: true, workerData: latch, argv: [require.resolve('../lib')] },
    );
    // Listened for at once: the worker may exit before the wake-up of `later` is delivered here.
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    assert.equal(await withinLimit(later, 'the wait after the cancel'), true);
    await withinLimit(exited, 'the worker');
    assertNoWaiters(latch);
    assert.equal(pendingWaitCount(latch), 0);
  });

  it('an open latch resolves at once and records nothing', async () => {
    const latch = new Latch(0);
    assert.equal(await latch.waitAsync(), true);
    assert.equal(pendingWaitCount(latch), 0);
    assert.equal(latch.cancelPendingWaits(), 0);
  });
});
