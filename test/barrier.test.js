'use strict';
// Barrier: construction and attachment (uninitialized and corrupt memory), every bad input, the
// blocking and Promise forms on one thread (timeouts and aborts withdraw the arrival), and real
// workers: many generations where nobody passes early and each has one leader, parties retrying
// after tiny timeouts and aborts, and terminate() of a worker blocked at the barrier.
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { Worker } = require('node:worker_threads');
const { Barrier, TimeoutError, layouts } = require('../lib');
const native = require('../lib/native');
const { pendingCount } = require('../lib/async_waits');
const { fixture, runWorkers, withinLimit, waitFor, isSettled, exitIfKeptAlive } = require('./helpers');

exitIfKeptAlive();

const { STATE_INDEX, PARTIES_INDEX, GENERATION_SHIFT, ARRIVED_MASK, MAX_PARTIES } = layouts.barrier;
const TYPE_ERROR = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' };
const RANGE_ERROR = { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' };
const CORRUPT = { code: 'ERR_PARKLOCK_CORRUPT' };
const UNINITIALIZED = { name: 'Error', code: 'ERR_PARKLOCK_UNINITIALIZED' };
const TIMEOUT = (error) => error instanceof TimeoutError && error.code === 'ERR_PARKLOCK_TIMEOUT';

function wordsOf(barrier) {
  return new Int32Array(barrier.buffer, barrier.byteOffset, layouts.barrier.WORDS);
}
// { generation, arrived } of the barrier's state word.
function stateOf(barrier) {
  const state = Atomics.load(wordsOf(barrier), STATE_INDEX);
  return { generation: state >>> GENERATION_SHIFT, arrived: state & ARRIVED_MASK };
}
function queued(barrier) {
  return native.queuedCount(wordsOf(barrier), STATE_INDEX);
}
function assertNoWaiters(barrier) {
  assert.equal(queued(barrier), 0, 'no waiter is left in the parking lot');
  assert.equal(pendingCount(), 0, 'no asynchronous wait is left pending on this thread');
}

describe('construction', () => {
  it('new Barrier(parties) allocates its own initialized memory', () => {
    const barrier = new Barrier(3);
    assert.ok(barrier.buffer instanceof SharedArrayBuffer);
    assert.equal(barrier.buffer.byteLength, Barrier.BYTES);
    assert.equal(Barrier.BYTES, layouts.barrier.BYTES);
    assert.equal(Barrier.ALIGN, layouts.barrier.ALIGN);
    assert.equal(barrier.byteOffset, 0);
    assert.equal(barrier.parties, 3);
    assert.deepEqual(Array.from(wordsOf(barrier)), [0, 3]);
    assert.deepEqual(Object.keys(barrier), ['buffer', 'byteOffset'], 'only the location is enumerable');
    assert.equal(new Barrier(1).parties, 1);
    assert.equal(new Barrier(MAX_PARTIES).parties, 65535);
  });

  it('Barrier.init writes a fresh barrier at the location and nothing else; the attach forms share it', () => {
    const sab = new SharedArrayBuffer(16);
    const all = new Int32Array(sab);
    all.fill(-7);
    const barrier = Barrier.init(sab, 4, 2);
    assert.ok(barrier instanceof Barrier);
    assert.deepEqual(Array.from(all), [-7, 0, 2, -7]);
    const views = [new Barrier(sab, 4), new Barrier({ buffer: sab, byteOffset: 4 }), new Barrier(structuredClone(barrier))];
    for (const view of views) assert.equal(view.parties, 2);
    assert.throws(() => views[0].wait(0), TIMEOUT);
    const waiting = views[1].waitAsync();
    assert.equal(views[2].wait(), true, 'the second arrival, through another view, leads');
    return withinLimit(waiting, 'first arrival').then((leader) => {
      assert.equal(leader, false);
      assert.deepEqual(stateOf(barrier), { generation: 1, arrived: 0 });
      assertNoWaiters(barrier);
    });
  });

  it('attaching to zeroed memory throws ERR_PARKLOCK_UNINITIALIZED', () => {
    const sab = new SharedArrayBuffer(8);
    assert.throws(() => new Barrier(sab), UNINITIALIZED);
    assert.throws(() => new Barrier({ buffer: sab, byteOffset: 0 }), UNINITIALIZED);
    assert.deepEqual(Array.from(new Int32Array(sab)), [0, 0]);
  });

  it('attaching to a parties word out of range throws ERR_PARKLOCK_CORRUPT', () => {
    const sab = new SharedArrayBuffer(8);
    for (const parties of [-1, 65536, 2 ** 31 - 1]) {
      new Int32Array(sab)[PARTIES_INDEX] = parties;
      assert.throws(() => new Barrier(sab), CORRUPT, `parties word ${parties}`);
    }
  });
});

describe('bad input', () => {
  it('the constructor rejects a missing, non-integer or out-of-range parties', () => {
    assert.throws(() => new Barrier(), TYPE_ERROR);
    for (const parties of [0, -1, 1.5, NaN, Infinity, MAX_PARTIES + 1]) {
      assert.throws(() => new Barrier(parties), RANGE_ERROR, `parties ${parties}`);
    }
    for (const value of ['3', null, true, 3n, () => {}, new ArrayBuffer(8)]) {
      assert.throws(() => new Barrier(value), TYPE_ERROR, `new Barrier(${String(value)})`);
    }
  });

  it('the attach forms and Barrier.init reject bad memory, offsets and parties without writing', () => {
    const sab = new SharedArrayBuffer(8);
    for (const offset of [1, 2, -4, 0.5, NaN, 4, 8]) {
      assert.throws(() => new Barrier(sab, offset), RANGE_ERROR, `byteOffset ${offset}`);
      assert.throws(() => Barrier.init(sab, offset, 2), RANGE_ERROR, `init at ${offset}`);
    }
    assert.throws(() => Barrier.init(undefined, 0, 2), TYPE_ERROR);
    assert.throws(() => Barrier.init(new ArrayBuffer(8), 0, 2), TYPE_ERROR);
    assert.throws(() => Barrier.init(sab, 0), TYPE_ERROR);
    for (const parties of [0, -1, 2.5, MAX_PARTIES + 1]) {
      assert.throws(() => Barrier.init(sab, 0, parties), RANGE_ERROR, `init parties ${parties}`);
    }
    assert.deepEqual(Array.from(new Int32Array(sab)), [0, 0]);
  });

  it('wait throws and waitAsync rejects on bad timeouts and options, without arriving', async () => {
    const barrier = new Barrier(2);
    for (const timeout of [-1, NaN, -Infinity]) {
      assert.throws(() => barrier.wait(timeout), RANGE_ERROR);
      await assert.rejects(barrier.waitAsync({ timeout }), RANGE_ERROR);
    }
    for (const timeout of ['5', null, 5n]) {
      assert.throws(() => barrier.wait(timeout), TYPE_ERROR);
      await assert.rejects(barrier.waitAsync({ timeout }), TYPE_ERROR);
    }
    for (const options of [null, 5, 'x']) await assert.rejects(barrier.waitAsync(options), TYPE_ERROR);
    for (const signal of [null, {}, new EventTarget()]) {
      await assert.rejects(barrier.waitAsync({ signal }), TYPE_ERROR);
    }
    assert.deepEqual(stateOf(barrier), { generation: 0, arrived: 0 });
    assertNoWaiters(barrier);
  });

  it('corrupt or wiped words: wait throws and waitAsync rejects with a code, and nothing waits', async () => {
    const barrier = new Barrier(2);
    const words = wordsOf(barrier);
    const cases = [
      [(5 << GENERATION_SHIFT) | 2, 2, CORRUPT], // arrived == parties: never written
      [(5 << GENERATION_SHIFT) | 9, 3, CORRUPT],
      [0, -4, CORRUPT],
      [0, 65536, CORRUPT],
      [0, 0, UNINITIALIZED], // the memory was wiped after construction
    ];
    for (const [state, parties, expected] of cases) {
      Atomics.store(words, STATE_INDEX, state);
      Atomics.store(words, PARTIES_INDEX, parties);
      assert.throws(() => barrier.wait(), expected, `wait with [${state}, ${parties}]`);
      await assert.rejects(withinLimit(barrier.waitAsync(), 'waitAsync on bad words'), expected);
      if (parties === 2 || parties === 3) assert.equal(barrier.parties, parties);
      else assert.throws(() => barrier.parties, expected);
      assert.deepEqual(Array.from(words), [state, parties], 'nothing was written');
    }
    assertNoWaiters(barrier);
  });
});

describe('one thread', () => {
  it('a one-party barrier leads every generation at once', async () => {
    const barrier = new Barrier(1);
    assert.equal(barrier.wait(), true);
    assert.equal(barrier.wait(0), true);
    assert.equal(await barrier.waitAsync(), true);
    assert.equal(await barrier.waitAsync({ timeout: 0 }), true);
    assert.deepEqual(stateOf(barrier), { generation: 4, arrived: 0 });
  });

  it('the generation wraps around after 65535', () => {
    const barrier = new Barrier(1);
    Atomics.store(wordsOf(barrier), STATE_INDEX, 0xffff << GENERATION_SHIFT);
    assert.equal(barrier.wait(), true);
    assert.deepEqual(stateOf(barrier), { generation: 0, arrived: 0 });
  });

  it('wait(timeout) throws TimeoutError and withdraws the arrival', () => {
    const barrier = new Barrier(2);
    for (const timeout of [0, 1, 10]) {
      assert.throws(() => barrier.wait(timeout), TIMEOUT, `timeout ${timeout}`);
      assert.deepEqual(stateOf(barrier), { generation: 0, arrived: 0 });
    }
    assertNoWaiters(barrier);
  });

  it('two waitAsync calls on one thread complete a two-party generation: one true, one false', async () => {
    const barrier = new Barrier(2);
    for (let generation = 0; generation < 3; generation++) {
      const first = barrier.waitAsync();
      assert.deepEqual(stateOf(barrier), { generation, arrived: 1 });
      assert.equal(queued(barrier), 1);
      assert.equal(await isSettled(first), false);
      const second = barrier.waitAsync();
      assert.deepEqual(await withinLimit(Promise.all([first, second]), 'generation'), [false, true]);
    }
    assert.deepEqual(stateOf(barrier), { generation: 3, arrived: 0 });
    assertNoWaiters(barrier);
  });

  it('waitAsync timeout rejects with TimeoutError, withdraws, and the next generation is exact', async () => {
    const barrier = new Barrier(3);
    await assert.rejects(withinLimit(barrier.waitAsync({ timeout: 0 }), 'timeout 0'), TIMEOUT);
    await assert.rejects(withinLimit(barrier.waitAsync({ timeout: 10 }), 'timeout 10'), TIMEOUT);
    assert.deepEqual(stateOf(barrier), { generation: 0, arrived: 0 });
    assertNoWaiters(barrier);
    // Had a timed-out arrival stood, the second of these would complete the generation.
    const a = barrier.waitAsync();
    const b = barrier.waitAsync();
    assert.equal(await isSettled(a), false);
    assert.deepEqual(stateOf(barrier), { generation: 0, arrived: 2 });
    const c = barrier.waitAsync();
    assert.deepEqual(await withinLimit(Promise.all([a, b, c]), 'generation'), [false, false, true]);
    assert.deepEqual(stateOf(barrier), { generation: 1, arrived: 0 });
    assertNoWaiters(barrier);
  });

  it('an abort rejects with signal.reason and withdraws; an aborted signal rejects without arriving', async () => {
    const barrier = new Barrier(2);
    const controller = new AbortController();
    const promise = barrier.waitAsync({ signal: controller.signal });
    assert.deepEqual(stateOf(barrier), { generation: 0, arrived: 1 });
    const reason = new Error('stop');
    controller.abort(reason);
    await assert.rejects(withinLimit(promise, 'aborted waitAsync'), (error) => error === reason);
    assert.deepEqual(stateOf(barrier), { generation: 0, arrived: 0 });

    const aborted = AbortSignal.abort();
    await assert.rejects(barrier.waitAsync({ signal: aborted }), (error) => error === aborted.reason);
    assert.deepEqual(stateOf(barrier), { generation: 0, arrived: 0 }, 'no arrival');
    assertNoWaiters(barrier);
  });

  it('an abort after the generation completed resolves false: the party has passed', async () => {
    const barrier = new Barrier(2);
    const controller = new AbortController();
    const first = barrier.waitAsync({ signal: controller.signal });
    const second = barrier.waitAsync(); // completes the generation; the first one's wake-up is on its way
    controller.abort();
    assert.deepEqual(await withinLimit(Promise.all([first, second]), 'generation'), [false, true]);
    assert.deepEqual(stateOf(barrier), { generation: 1, arrived: 0 });
    assertNoWaiters(barrier);
  });

  it('a cancelled waiter that finds its generation completed does not withdraw from the next one', async () => {
    // White box: the generation moves on without a notify (as when the abort wins the race with
    // the leader's notify), so the abort cancels a waiter whose generation has completed.
    const barrier = new Barrier(2);
    const words = wordsOf(barrier);
    const controller = new AbortController();
    const waiting = barrier.waitAsync({ signal: controller.signal });
    assert.equal(queued(barrier), 1);
    Atomics.store(words, STATE_INDEX, (1 << GENERATION_SHIFT) | 1); // generation 1, one arrived
    controller.abort();
    assert.equal(await withinLimit(waiting, 'cancelled after completion'), false);
    assert.deepEqual(stateOf(barrier), { generation: 1, arrived: 1 }, "generation 1's arrival stays");
    assertNoWaiters(barrier);
  });
});

describe('workers', () => {
  for (const mode of ['sync', 'async', 'mixed']) {
    it(`many generations (${mode}): nobody passes early and each generation has exactly one leader`, { timeout: 60_000 }, async () => {
      const parties = 4;
      const generations = 300;
      const barrier = new Barrier(parties);
      const slots = new SharedArrayBuffer(4 * parties * generations);
      const leaders = new SharedArrayBuffer(4 * generations);
      const datas = Array.from({ length: parties }, (_, index) => ({
        barrier,
        slots,
        leaders,
        index,
        parties,
        generations,
        mode,
      }));
      await runWorkers(fixture('barrier_generations.js'), datas, { limit: 45_000 });
      assert.ok(new Int32Array(leaders).every((count) => count === 1), 'one leader per generation');
      assert.deepEqual(stateOf(barrier), { generation: generations, arrived: 0 });
      assertNoWaiters(barrier);
    });
  }

  it('parties retrying after tiny timeouts and aborts keep every generation exact', { timeout: 60_000 }, async () => {
    const parties = 3;
    const rounds = 150;
    const barrier = new Barrier(parties);
    const slots = new SharedArrayBuffer(4 * parties * rounds);
    const leaders = new SharedArrayBuffer(4 * rounds);
    const datas = Array.from({ length: parties }, (_, index) => ({
      barrier,
      slots,
      leaders,
      index,
      parties,
      rounds,
      seed: 104729 * (index + 1),
    }));
    const results = await runWorkers(fixture('barrier_retry.js'), datas, { limit: 45_000 });
    const withdrawn = results.reduce((sum, { stats }) => sum + stats.timedOut + stats.aborted, 0);
    assert.ok(withdrawn > 0, 'some arrivals timed out or were aborted');
    assert.ok(new Int32Array(leaders).every((count) => count === 1), 'one leader per round');
    assert.deepEqual(stateOf(barrier), { generation: rounds, arrived: 0 });
    assertNoWaiters(barrier);
  });

  it('a worker that times out does not break the generation the others complete', { timeout: 30_000 }, async () => {
    const barrier = new Barrier(2);
    // A worker arrives with a short timeout and gives up; then this thread and another worker
    // complete generation 0 exactly, with one leader.
    const code = `
      const { parentPort, workerData } = require('node:worker_threads');
      const { Barrier } = require(${JSON.stringify(require.resolve('../lib'))});
      const barrier = new Barrier(workerData.barrier);
      let result;
      try { result = barrier.wait(workerData.timeout); } catch (error) { result = error.code; }
      parentPort.postMessage({ type: 'done', result });`;
    const run = (timeout) =>
      new Promise((resolve, reject) => {
        const worker = new Worker(code, { eval: true, workerData: { barrier, timeout } });
        worker.on('message', ({ result }) => resolve(result));
        worker.on('error', reject);
      });
    assert.equal(await withinLimit(run(20), 'timed-out worker'), 'ERR_PARKLOCK_TIMEOUT');
    assert.deepEqual(stateOf(barrier), { generation: 0, arrived: 0 });
    const mine = barrier.waitAsync();
    const theirs = await withinLimit(run(Infinity), 'second worker');
    const leader = await withinLimit(mine, 'main thread waitAsync');
    assert.deepEqual([leader, theirs].sort(), [false, true]);
    assert.deepEqual(stateOf(barrier), { generation: 1, arrived: 0 });
    assertNoWaiters(barrier);
  });

  for (const mode of ['wait', 'waitAsync']) {
    it(`terminate() ends a worker blocked in ${mode}(); its arrival stands and its waiter leaves`, { timeout: 30_000 }, async () => {
      const barrier = new Barrier(2);
      const worker = new Worker(fixture('barrier_blocked.js'), { workerData: { barrier, mode } });
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      let returned = false;
      worker.on('message', (message) => {
        if (message.type === 'returned') returned = true;
      });
      await waitFor(() => queued(barrier) === 1, `worker parked in ${mode}()`);
      const start = Date.now();
      await withinLimit(worker.terminate(), 'terminate()');
      await withinLimit(exited, 'worker exit');
      assert.ok(Date.now() - start < 2000, `terminate() took ${Date.now() - start} ms`);
      assert.equal(returned, false);
      await waitFor(() => queued(barrier) === 0, 'the terminated waiter left the queue');
      // The terminated party arrived; the next arrival completes its generation.
      assert.deepEqual(stateOf(barrier), { generation: 0, arrived: 1 });
      assert.equal(barrier.wait(), true);
      assert.deepEqual(stateOf(barrier), { generation: 1, arrived: 0 });
      assertNoWaiters(barrier);
    });
  }
});

describe('cancelPendingWaits', () => {
  const { pendingWaitCount } = require('../lib/async_waits');

  it('rejects a pending wait with the reason and withdraws its arrival', async () => {
    const barrier = new Barrier(2);
    const waiting = barrier.waitAsync();
    await waitFor(() => queued(barrier) === 1, 'the wait to queue');
    assert.deepEqual(stateOf(barrier), { generation: 0, arrived: 1 });
    assert.equal(barrier.cancelPendingWaits(), 1);
    await assert.rejects(withinLimit(waiting, 'the cancelled wait'), { code: 'ERR_PARKLOCK_CANCELLED' });
    assert.deepEqual(stateOf(barrier), { generation: 0, arrived: 0 }, 'the arrival is withdrawn');
    assertNoWaiters(barrier);
    assert.equal(pendingWaitCount(barrier), 0);
    // Still a barrier for two: both parties pass together.
    const [a, b] = await withinLimit(Promise.all([barrier.waitAsync(), barrier.waitAsync()]), 'two parties');
    assert.equal(a !== b, true, 'exactly one is the last to arrive');
    assert.equal(pendingWaitCount(barrier), 0);
    assertNoWaiters(barrier);
  });
});
