'use strict';
// Once: the initializer runs in one thread at a time and completes once; every other caller waits
// for it (run() blocking, runAsync() with a Promise) and then returns without running its own; a
// failed initializer leaves the once to the next caller; a run whose thread ended is run again by
// the next caller, which is told (ERR_PARKLOCK_OWNER_DIED).
const { describe, it, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const { Worker } = require('node:worker_threads');
const { Once, OwnerDiedError, inspect, layouts } = require('../lib');
const native = require('../lib/native');
const { fixture, waitFor, withinLimit, runWorkers, abortTestWaits, exitIfKeptAlive } = require('./helpers');

exitIfKeptAlive();
afterEach(abortTestWaits);

const runner = fixture('once_runner.js');

function counter() {
  return new Int32Array(new SharedArrayBuffer(4));
}

// Waiters parked on the once's word, in any thread.
function queued(once) {
  return native.queuedCount(new Int32Array(once.buffer, once.byteOffset, 1), 0);
}

function assertFinished(once) {
  assert.equal(once.done, true);
  assert.equal(Atomics.load(new Int32Array(once.buffer, once.byteOffset, 1), 0), layouts.once.DONE);
  assert.equal(queued(once), 0, 'no waiter is left in the parking lot');
}

// Starts a worker running the fixture in `mode`; resolves once its initializer runs, with the
// worker and a Promise of its exit.
async function startRunning(once, count, mode) {
  const worker = new Worker(runner, { workerData: { once, counter: count.buffer, mode } });
  const { threadId } = worker;
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  await withinLimit(new Promise((resolve) => worker.once('message', resolve)), 'the worker to run');
  return { worker, threadId, exited };
}

describe('Once', () => {
  it('runs the initializer once; later calls return false without calling it', async () => {
    const once = new Once();
    assert.equal(once.done, false);
    let calls = 0;
    assert.equal(once.run(() => calls++), true);
    assert.equal(once.run(() => calls++), false);
    assert.equal(await once.runAsync(() => calls++), false);
    assert.equal(calls, 1);
    assertFinished(once);
    assert.equal(await new Once().runAsync(async () => calls++), true);
    assert.equal(calls, 2);
  });

  it('N workers race run(fn): fn runs exactly once, and every worker returns after it', async () => {
    const once = new Once();
    const count = counter();
    const results = await runWorkers(
      runner,
      Array.from({ length: 4 }, () => ({ once, counter: count.buffer, mode: 'count' })),
    );
    assert.equal(count[0], 1);
    assert.equal(results.filter((result) => result.ran).length, 1);
    assertFinished(once);
  });

  it('runAsync() on the main thread holds workers blocked in run() until its initializer completes', async () => {
    const once = new Once();
    const count = counter();
    let release;
    const main = once.runAsync(async () => {
      Atomics.add(count, 0, 1);
      await new Promise((resolve) => (release = resolve));
    });
    const workers = runWorkers(
      runner,
      Array.from({ length: 3 }, () => ({ once, counter: count.buffer, mode: 'count' })),
    );
    await waitFor(() => once.waiting === 3, 'the workers to wait');
    const [entry] = inspect().filter((primitive) => primitive.kind === 'once');
    assert.equal(entry.primitive, once, 'inspect() lists the waiters as kind "once"');
    assert.equal(entry.waiters.length, 3);
    release();
    assert.equal(await main, true);
    const results = await workers;
    assert.deepEqual(results.map((result) => result.ran), [false, false, false]);
    assert.equal(count[0], 1);
    assertFinished(once);
  });

  it('a throwing initializer: its caller gets the error, and the next caller runs', async () => {
    const once = new Once();
    const error = new Error('failed');
    assert.throws(() => once.run(() => { throw error; }), (thrown) => thrown === error);
    assert.equal(once.done, false);
    await assert.rejects(once.runAsync(async () => { throw error; }), (thrown) => thrown === error);
    assert.equal(once.done, false);
    const count = counter();
    const [failed] = await runWorkers(runner, [{ once, counter: count.buffer, mode: 'throw' }]);
    assert.equal(failed.threw, 'the initializer failed');
    const [result] = await runWorkers(runner, [{ once, counter: count.buffer, mode: 'count' }]);
    assert.equal(result.ran, true);
    assert.equal(count[0], 2);
    assertFinished(once);
  });

  it('a failed run wakes the waiters, and one of them runs its initializer', async () => {
    const once = new Once();
    const count = counter();
    let fail;
    const main = once.runAsync(() => new Promise((_, reject) => (fail = reject)));
    const workers = runWorkers(
      runner,
      Array.from({ length: 3 }, () => ({ once, counter: count.buffer, mode: 'count' })),
    );
    await waitFor(() => once.waiting === 3, 'the workers to wait');
    const error = new Error('failed');
    fail(error);
    await assert.rejects(main, (thrown) => thrown === error);
    const results = await workers;
    assert.equal(results.filter((result) => result.ran).length, 1);
    assert.equal(count[0], 1);
    assertFinished(once);
  });

  for (const mode of ['terminate', 'exit']) {
    it(`a worker that ends (${mode}) inside the initializer: the next caller runs it and is told`, async () => {
      const once = new Once();
      const count = counter();
      const { worker, threadId, exited } = await startRunning(once, count, mode);
      if (mode === 'terminate') await worker.terminate();
      await withinLimit(exited, 'the worker to end');
      assert.equal(once.done, false, 'not done');
      let told;
      assert.equal(once.run((died) => (told = died)), true);
      assert.ok(told instanceof OwnerDiedError);
      assert.equal(told.code, 'ERR_PARKLOCK_OWNER_DIED');
      assert.equal(told.threadId, threadId);
      assert.equal(told.guard, null);
      assertFinished(once);
    });
  }

  it('a waiter queued when the running worker is terminated is handed the run, and told', async () => {
    const once = new Once();
    const count = counter();
    const { worker, threadId } = await startRunning(once, count, 'terminate');
    let told;
    const main = once.runAsync((died) => {
      told = died;
    });
    const workers = runWorkers(runner, [{ once, counter: count.buffer, mode: 'count' }]);
    await waitFor(() => once.waiting === 2, 'the waiters to queue');
    await worker.terminate();
    assert.equal(await withinLimit(main, 'the handed-off run'), true, 'the oldest waiter runs it');
    assert.equal(told.code, 'ERR_PARKLOCK_OWNER_DIED');
    assert.equal(told.threadId, threadId);
    const [result] = await workers;
    assert.deepEqual(result, { type: 'done', ran: false, previousRunDied: null });
    assertFinished(once);
  });

  it('a worker that finds the run taken by a terminated worker runs it and is told', async () => {
    const once = new Once();
    const count = counter();
    const { worker, threadId } = await startRunning(once, count, 'terminate');
    await worker.terminate();
    const [result] = await runWorkers(runner, [{ once, counter: count.buffer, mode: 'count' }]);
    assert.equal(result.ran, true);
    assert.deepEqual(result.previousRunDied, { code: 'ERR_PARKLOCK_OWNER_DIED', threadId });
    assert.equal(count[0], 2);
    assertFinished(once);
  });

  it('runAsync() options bound its wait for another run, never its own run', async () => {
    const once = new Once();
    let release;
    const running = once.runAsync(() => new Promise((resolve) => (release = resolve)));
    await assert.rejects(once.runAsync(() => assert.fail('not run'), { timeout: 5 }), {
      name: 'TimeoutError',
      code: 'ERR_PARKLOCK_TIMEOUT',
    });
    const controller = new AbortController();
    const aborted = once.runAsync(() => assert.fail('not run'), { signal: controller.signal });
    controller.abort(new Error('stop'));
    await assert.rejects(aborted, { message: 'stop' });
    await assert.rejects(new Once().runAsync(() => assert.fail('not run'), { signal: controller.signal }), {
      message: 'stop',
    });
    assert.equal(once.waiting, 0);
    release();
    assert.equal(await running, true);
    assert.equal(await new Once().runAsync(async () => {}, { timeout: 0 }), true, 'its own run is not bounded');
    await assert.rejects(once.runAsync(() => {}, { timeout: -1 }), { code: 'ERR_OUT_OF_RANGE' });
    assertFinished(once);
  });

  it('run() inside its own initializer is refused instead of waiting forever', async () => {
    const once = new Once();
    assert.throws(
      () => once.run(() => once.run(() => {})),
      (error) => error.code === 'ERR_PARKLOCK_DEADLOCK',
    );
    assert.equal(once.done, false);
    // A runAsync() of the running thread waits for the run instead: it can complete meanwhile.
    let nested;
    assert.equal(await once.runAsync(async () => {
      nested = once.runAsync(() => assert.fail('runs once'));
    }), true);
    assert.equal(await nested, false);
    assertFinished(once);
  });

  it('is passed to workers like every primitive, and lives in caller memory', () => {
    const buffer = new SharedArrayBuffer(Once.BYTES * 2);
    const once = new Once(buffer, Once.BYTES);
    assert.equal(once.buffer, buffer);
    assert.equal(once.byteOffset, Once.BYTES);
    assert.equal(Once.BYTES, layouts.once.BYTES);
    assert.deepEqual({ ...layouts.once }, { ...native.onceLayout });
    const copy = new Once(structuredClone(once));
    copy.run(() => {});
    assert.equal(once.done, true);
    assert.equal(new Int32Array(buffer)[0], 0, 'the word before it is untouched');
  });

  it('refuses bad arguments with ERR_INVALID_ARG_TYPE', async () => {
    const once = new Once();
    for (const fn of [undefined, null, 1, 'fn', {}]) {
      assert.throws(() => once.run(fn), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
      await assert.rejects(once.runAsync(fn), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    }
    assert.throws(() => new Once(new ArrayBuffer(4)), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => new Once(new SharedArrayBuffer(4), 2), { code: 'ERR_OUT_OF_RANGE' });
    assert.equal(once.done, false);
  });
});
