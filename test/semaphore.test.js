'use strict';
// Semaphore: construction and bad input, the blocking, try and Promise forms, eventual fairness
// (a large request at the head gets its turn past barging), timeouts and aborts that leave no
// waiter and leak no permits, and real workers: an invariant-checking stress run mixing sync and
// async acquirers, and terminate() of workers blocked in acquire or waiting in acquireAsync.
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { Semaphore, TimeoutError, layouts } = require('../lib');
const native = require('../lib/native');
const { pendingCount } = require('../lib/async_waits');
const { HANG_LIMIT_MS, fixture, tick, waitFor, withinLimit, isSettled, runWorkers, agentsPerTest } = require('./helpers');

const { WAITERS_BIT, HAND_OFF_BIT, MAX_PERMITS } = layouts.semaphore;

const TYPE_ERROR = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' };
const RANGE_ERROR = { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' };
const CORRUPT = { code: 'ERR_PARKLOCK_CORRUPT' };

function wordOf(semaphore) {
  return new Int32Array(semaphore.buffer, semaphore.byteOffset, 1);
}

function loadWord(semaphore) {
  return Atomics.load(wordOf(semaphore), 0);
}

// Waiters queued on the semaphore's word, in any thread.
function queued(semaphore) {
  return native.queuedCount(wordOf(semaphore), 0);
}

// The state every test leaves its semaphores in: `permits` available and nothing else in the word
// (no waiters bit), nobody queued, no asynchronous wait of this thread pending.
function assertIdle(semaphore, permits) {
  assert.equal(loadWord(semaphore), permits, `the word is exactly ${permits} (no waiters bit)`);
  assert.equal(semaphore.available, permits);
  assert.equal(queued(semaphore), 0, 'no waiter is left in the parking lot');
  assert.equal(pendingCount(), 0, 'no asynchronous wait is left pending on this thread');
}

// Workers running test/fixtures/semaphore_agent.js, terminated after each test.
const startAgent = agentsPerTest(fixture('semaphore_agent.js'), (...semaphores) => ({ semaphores }));

// Sends a blocking op to `agent` and resolves once the worker is queued on the semaphore, which
// then has `expectedQueued` waiters, to { reply } (wrapped: resolving to the Promise itself would
// wait for it).
async function blockIn(agent, semaphore, expectedQueued, op, args) {
  const { started, reply } = agent.send(op, args);
  await withinLimit(started, `worker starting ${op}`);
  await waitFor(() => queued(semaphore) === expectedQueued, `the worker to queue in ${op}`);
  return { reply };
}

describe('construction', () => {
  it('new Semaphore() allocates Semaphore.BYTES of its own with 0 permits', () => {
    const s = new Semaphore();
    assert.ok(s.buffer instanceof SharedArrayBuffer);
    assert.equal(s.buffer.byteLength, Semaphore.BYTES);
    assert.equal(s.byteOffset, 0);
    assert.notEqual(new Semaphore().buffer, s.buffer, 'each new Semaphore() has its own memory');
    assertIdle(s, 0);
  });

  it('new Semaphore(n) allocates with n permits, up to Semaphore.MAX_PERMITS', () => {
    assertIdle(new Semaphore(5), 5);
    assertIdle(new Semaphore(0), 0);
    assertIdle(new Semaphore(MAX_PERMITS), MAX_PERMITS);
  });

  it('new Semaphore(sab, byteOffset) uses the word at byteOffset and nothing else', () => {
    const sab = new SharedArrayBuffer(16);
    const all = new Int32Array(sab);
    const s = new Semaphore(sab, 8);
    assert.equal(s.buffer, sab);
    assert.equal(s.byteOffset, 8);
    assert.equal(s.available, 0, 'zeroed memory is a semaphore with no permits');
    s.release(3);
    assert.deepEqual(Array.from(all), [0, 0, 3, 0]);
    s.acquire(2);
    assert.deepEqual(Array.from(all), [0, 0, 1, 0]);
    assert.equal(new Semaphore(sab).byteOffset, 0, 'byteOffset defaults to 0');
  });

  it('new Semaphore({ buffer, byteOffset }) and a structured clone are the same semaphore', () => {
    const sab = new SharedArrayBuffer(8);
    const s = new Semaphore(sab, 4);
    const clone = structuredClone(s);
    assert.deepEqual(Object.keys(clone).sort(), ['buffer', 'byteOffset']);
    const attached = new Semaphore(clone);
    const record = new Semaphore({ buffer: sab, byteOffset: 4 });
    s.release(2);
    assert.equal(attached.available, 2);
    assert.equal(record.tryAcquire(2), true);
    assert.equal(s.available, 0);
  });

  it('Semaphore.init writes the permits at the location and returns the semaphore there', () => {
    const sab = new SharedArrayBuffer(12);
    const all = new Int32Array(sab);
    all[1] = -1; // whatever was there before
    const s = Semaphore.init(sab, 4, 7);
    assert.ok(s instanceof Semaphore);
    assert.equal(s.buffer, sab);
    assert.equal(s.byteOffset, 4);
    assert.deepEqual(Array.from(all), [0, 7, 0]);
    assert.equal(Semaphore.init(sab, 8, 0).available, 0);
  });

  it('exposes BYTES, ALIGN and MAX_PERMITS from the addon layout, and read-only location', () => {
    assert.equal(Semaphore.BYTES, layouts.semaphore.BYTES);
    assert.equal(Semaphore.BYTES, 4);
    assert.equal(Semaphore.ALIGN, 4);
    assert.equal(Semaphore.MAX_PERMITS, MAX_PERMITS);
    assert.equal(MAX_PERMITS, 2 ** 30 - 1);
    assert.ok(Object.isFrozen(layouts.semaphore));
    const s = new Semaphore();
    assert.throws(() => {
      s.buffer = new SharedArrayBuffer(4);
    }, TypeError);
    assert.throws(() => {
      s.byteOffset = 4;
    }, TypeError);
  });

  it('a semaphore posted to a worker is the same semaphore', { timeout: 30_000 }, async () => {
    const s = new Semaphore(3);
    const agent = await startAgent(s);
    assert.equal(await agent.call('available'), 3);
    assert.equal(await agent.call('tryAcquire', { n: 2 }), true);
    assert.equal(s.available, 1);
    await agent.call('release', { n: 2 });
    assertIdle(s, 3);
  });
});

describe('bad input', () => {
  it('the constructor rejects bad permits, memory and offsets', () => {
    for (const bad of [-1, 1.5, NaN, Infinity, MAX_PERMITS + 1]) {
      assert.throws(() => new Semaphore(bad), RANGE_ERROR, String(bad));
    }
    for (const bad of ['3', null, true, 3n]) {
      assert.throws(() => new Semaphore(bad), TYPE_ERROR, String(bad));
    }
    assert.throws(() => new Semaphore(3, 0), TYPE_ERROR, 'a byteOffset beside a number of permits');
    assert.throws(() => new Semaphore(new ArrayBuffer(4)), TYPE_ERROR);
    assert.throws(() => new Semaphore({ buffer: new ArrayBuffer(4) }), TYPE_ERROR);
    const sab = new SharedArrayBuffer(8);
    for (const offset of [2, -4, 1.5, 8, 12]) {
      assert.throws(() => new Semaphore(sab, offset), RANGE_ERROR, String(offset));
    }
    assert.throws(() => new Semaphore(sab, '0'), TYPE_ERROR);
  });

  it('Semaphore.init rejects bad arguments and writes nothing', () => {
    const sab = new SharedArrayBuffer(8);
    const all = new Int32Array(sab);
    assert.throws(() => Semaphore.init(new ArrayBuffer(8), 0, 1), TYPE_ERROR);
    assert.throws(() => Semaphore.init({ buffer: sab, byteOffset: 0 }, 0, 1), TYPE_ERROR);
    assert.throws(() => Semaphore.init(5, 0, 1), TYPE_ERROR);
    assert.throws(() => Semaphore.init(sab, 0), TYPE_ERROR, 'permits is required');
    assert.throws(() => Semaphore.init(sab, 0, -1), RANGE_ERROR);
    assert.throws(() => Semaphore.init(sab, 0, MAX_PERMITS + 1), RANGE_ERROR);
    assert.throws(() => Semaphore.init(sab, 8, 1), RANGE_ERROR);
    assert.throws(() => Semaphore.init(sab, 2, 1), RANGE_ERROR);
    assert.deepEqual(Array.from(all), [0, 0]);
  });

  it('every operation refuses a bad count (acquireAsync by rejecting) and changes nothing', async () => {
    const s = new Semaphore(2);
    const ops = {
      acquire: (n) => s.acquire(n),
      tryAcquire: (n) => s.tryAcquire(n),
      'tryAcquire with a timeout': (n) => s.tryAcquire(n, 10),
      release: (n) => s.release(n),
    };
    for (const [name, op] of Object.entries(ops)) {
      for (const bad of [0, -1, 1.5, NaN, Infinity, MAX_PERMITS + 1]) {
        assert.throws(() => op(bad), RANGE_ERROR, `${name}(${bad})`);
      }
      for (const bad of ['1', null, 1n, {}]) {
        assert.throws(() => op(bad), TYPE_ERROR, `${name}(${String(bad)})`);
      }
    }
    for (const bad of [0, -1, 1.5, NaN, Infinity, MAX_PERMITS + 1]) {
      await assert.rejects(s.acquireAsync(bad), RANGE_ERROR, `acquireAsync(${bad})`);
    }
    for (const bad of ['1', null, 1n, {}]) {
      await assert.rejects(s.acquireAsync(bad), TYPE_ERROR, `acquireAsync(${String(bad)})`);
    }
    assertIdle(s, 2);
  });

  it('tryAcquire throws and acquireAsync rejects on bad timeouts and options, taking nothing', async () => {
    const s = new Semaphore(2);
    for (const bad of [-1, NaN]) assert.throws(() => s.tryAcquire(1, bad), RANGE_ERROR);
    assert.throws(() => s.tryAcquire(1, '5'), TYPE_ERROR);
    for (const bad of [null, 5, 'x']) await assert.rejects(s.acquireAsync(1, bad), TYPE_ERROR);
    await assert.rejects(s.acquireAsync(1, { timeout: -1 }), RANGE_ERROR);
    await assert.rejects(s.acquireAsync(1, { timeout: '1' }), TYPE_ERROR);
    await assert.rejects(s.acquireAsync(1, { signal: {} }), TYPE_ERROR);
    assertIdle(s, 2);
  });

  it('releasing beyond MAX_PERMITS is a RangeError that releases nothing', async () => {
    const s = new Semaphore(MAX_PERMITS - 1);
    assert.throws(() => s.release(2), (error) => {
      assert.equal(error.name, 'RangeError');
      assert.equal(error.code, 'ERR_OUT_OF_RANGE');
      assert.match(error.message, /at most 1 /);
      return true;
    });
    assert.equal(s.available, MAX_PERMITS - 1);

    // The same check on the slow path, with a waiter queued for every permit there can be.
    const all = s.acquireAsync(MAX_PERMITS);
    assert.equal(queued(s), 1);
    assert.throws(() => s.release(2), RANGE_ERROR);
    assert.equal(loadWord(s), WAITERS_BIT | (MAX_PERMITS - 1), 'unchanged, waiters bit set');
    s.release(1);
    await withinLimit(all, 'acquireAsync(MAX_PERMITS)');
    assertIdle(s, 0);
  });

  for (const [label, value] of [
    ['with the hand-off bit but no waiters bit', HAND_OFF_BIT | 3],
    ['with only the hand-off bit', HAND_OFF_BIT],
  ]) {
    it(`a corrupt word (${label}) makes every operation fail with ERR_PARKLOCK_CORRUPT`, async () => {
      const s = new Semaphore();
      const word = wordOf(s);
      Atomics.store(word, 0, value);
      assert.throws(() => s.acquire(), CORRUPT);
      assert.throws(() => s.tryAcquire(), CORRUPT);
      assert.throws(() => s.tryAcquire(1, 5), CORRUPT);
      assert.throws(() => s.release(), CORRUPT);
      assert.throws(() => s.available, CORRUPT);
      await assert.rejects(withinLimit(s.acquireAsync(), 'acquireAsync on a corrupt word'), CORRUPT);
      // The addon's own checks, behind the JavaScript ones: no wait, no write.
      const handle = native.handle(word, 1);
      assert.equal(native.semaphoreAcquireSlow(handle, 1, Infinity), native.settled.CORRUPT);
      assert.equal(native.semaphoreAcquireAsync(handle, 1, {}), native.settled.CORRUPT);
      assert.throws(() => native.semaphoreReleaseSlow(handle, 1), CORRUPT);
      assert.equal(Atomics.load(word, 0), value, 'nothing was written');
      assert.equal(queued(s), 0);
      assert.equal(pendingCount(), 0);
    });
  }

  it('the addon checks counts and handles too', () => {
    const word = new Int32Array(new SharedArrayBuffer(4));
    const handle = native.handle(word, 1);
    assert.throws(() => native.semaphoreAcquireSlow(handle, 0, 0), RANGE_ERROR);
    assert.throws(() => native.semaphoreAcquireSlow(handle, Infinity, 0), RANGE_ERROR);
    assert.throws(() => native.semaphoreReleaseSlow(handle, 2 ** 31), RANGE_ERROR);
    assert.throws(() => native.semaphoreReleaseSlow(word, 1), TYPE_ERROR);
    assert.throws(() => native.semaphoreAcquireAsync(handle, '1', {}), TYPE_ERROR);
    assert.throws(() => native.handle(word, 2), RANGE_ERROR);
    assert.equal(word[0], 0);
  });
});

describe('acquire, tryAcquire, release', () => {
  it('count permits on one thread; tryAcquire never takes part of a request', () => {
    const s = new Semaphore(3);
    s.acquire();
    s.acquire(2);
    assert.equal(s.available, 0);
    assert.equal(s.tryAcquire(), false);
    s.release(2);
    assert.equal(s.tryAcquire(3), false);
    assert.equal(s.available, 2, 'a failed tryAcquire takes nothing');
    assert.equal(s.tryAcquire(2), true);
    s.release(3);
    assertIdle(s, 3);
  });

  it('tryAcquire(n, timeout) returns false after the timeout, leaving no waiter', () => {
    const s = new Semaphore(1);
    assert.equal(s.tryAcquire(2, 5), false);
    assertIdle(s, 1);
  });

  it('a worker blocked in acquire(n) gets the permits once enough are released', { timeout: 30_000 }, async () => {
    const s = new Semaphore();
    const agent = await startAgent(s);
    const { reply } = await blockIn(agent, s, 1, 'acquire', { n: 2 });
    s.release(1);
    assert.equal(queued(s), 1, 'one permit is not enough');
    assert.equal(s.available, 1);
    s.release(1);
    assert.equal(await withinLimit(reply, 'worker acquire(2)'), true);
    assert.equal(s.available, 0);
    await agent.call('release', { n: 2 });
    assertIdle(s, 2);
  });

  it('tryAcquire(n, timeout) in a worker succeeds when the main thread releases meanwhile', { timeout: 30_000 }, async () => {
    const s = new Semaphore();
    const agent = await startAgent(s);
    const { reply } = await blockIn(agent, s, 1, 'tryAcquire', { n: 1, timeout: 60_000 });
    s.release(1);
    assert.equal(await withinLimit(reply, 'worker tryAcquire'), true);
    assertIdle(s, 0);
  });
});

describe('acquireAsync', () => {
  it('resolves to undefined at once when the permits are available', async () => {
    const s = new Semaphore(2);
    assert.equal(await s.acquireAsync(2), undefined);
    assert.equal(s.available, 0);
    s.release(2);
    assertIdle(s, 2);
  });

  it('waits for a release and then holds the permits', async () => {
    const s = new Semaphore(1);
    const waiting = s.acquireAsync(3);
    assert.equal(queued(s), 1);
    s.release(1);
    assert.equal(await isSettled(waiting), false);
    s.release(1);
    await withinLimit(waiting, 'acquireAsync(3)');
    assert.equal(s.available, 0);
    s.release(3);
    assertIdle(s, 3);
  });

  it('a timeout rejects with TimeoutError, leaves no waiter and takes nothing', async () => {
    const s = new Semaphore(2);
    await assert.rejects(withinLimit(s.acquireAsync(3, { timeout: 5 }), 'timeout'), (error) => {
      assert.ok(error instanceof TimeoutError);
      assert.equal(error.code, 'ERR_PARKLOCK_TIMEOUT');
      return true;
    });
    assertIdle(s, 2);
  });

  it('an abort rejects with signal.reason and removes the waiter', async () => {
    const s = new Semaphore();
    const controller = new AbortController();
    const waiting = s.acquireAsync(1, { signal: controller.signal });
    assert.equal(queued(s), 1);
    const reason = new Error('stop');
    controller.abort(reason);
    await assert.rejects(withinLimit(waiting, 'aborted acquireAsync'), (error) => error === reason);
    assertIdle(s, 0);
  });

  it('an already-aborted signal rejects at once without taking available permits', async () => {
    const s = new Semaphore(1);
    const reason = new Error('already');
    await assert.rejects(s.acquireAsync(1, { signal: AbortSignal.abort(reason) }), (e) => e === reason);
    assertIdle(s, 1);
  });

  it('an abort or timeout after acquireAsync resolved has no effect', async () => {
    const s = new Semaphore();
    const controller = new AbortController();
    const waiting = s.acquireAsync(2, { signal: controller.signal, timeout: 60_000 });
    s.release(2);
    await withinLimit(waiting, 'acquireAsync');
    controller.abort();
    await tick(10);
    assert.equal(pendingCount(), 0, 'the timer and the abort listener are gone');
    assert.equal(s.available, 0, 'the permits are still held');
    s.release(2);
    assertIdle(s, 2);
  });

  it('an abort after the grant but before it settled rejects and passes the permits on', async () => {
    const s = new Semaphore();
    const controller = new AbortController();
    const first = s.acquireAsync(2, { signal: controller.signal });
    const second = s.acquireAsync(1);
    // Wakes `first` to compete for the permits, or hands them to it on a fair turn; either way
    // its settlement is still on its way to this thread.
    s.release(2);
    assert.equal(queued(s), 1, 'only `second` is left queued');
    assert.ok([0, 2].includes(s.available), `released or handed over, not ${s.available}`);
    // Too late to leave the queue: what `first` was woken for must reach `second`.
    controller.abort();
    await assert.rejects(withinLimit(first, 'aborted acquireAsync'), { name: 'AbortError' });
    await withinLimit(second, 'the waiter behind it, granted the returned permits');
    assert.equal(s.available, 1);
    s.release(1);
    assertIdle(s, 2);
  });

  it('a pending acquireAsync keeps its worker alive until granted', { timeout: 30_000 }, async () => {
    const s = new Semaphore();
    let released = false;
    await runWorkers(fixture('semaphore_keep_alive.js'), [{ semaphore: s }], {
      onMessage: async (message) => {
        if (message.type !== 'waiting') return;
        await waitFor(() => queued(s) === 1, 'the worker to queue');
        await tick(20); // an exit would happen now if the wait did not keep the worker alive
        released = true;
        s.release(2);
      },
    });
    assert.ok(released);
    assertIdle(s, 2);
  });
});

describe('eventual fairness', () => {
  it('a large request at the head gets its turn while this thread keeps barging', async () => {
    const s = new Semaphore(5);
    assert.equal(s.tryAcquire(1), true);
    let granted = false;
    const large = s.acquireAsync(5).then(() => {
      granted = true;
    });
    assert.equal(queued(s), 1);
    // Each release wakes the head to compete (or, on a fair turn, hands it the permits), and this
    // thread takes one back at once if it still can: barging. The head loses at most the races it
    // was woken for until its fair turn, the next one after a lost race.
    let barged = 0;
    for (let round = 0; round < 100 && !granted; round++) {
      s.release(1);
      if (s.tryAcquire(1)) barged += 1;
      await tick();
    }
    await withinLimit(large, 'the large request');
    assert.ok(barged <= 2, `barged ${barged} times past the head`);
    assert.equal(s.available, 0, 'all 5 permits are the large request\'s');
    s.release(5);
    assertIdle(s, 5);
  });

  it('blocking workers and an async waiter all get their permits, one release at a time', { timeout: 30_000 }, async () => {
    const s = new Semaphore();
    const big = await startAgent(s);
    const small = await startAgent(s);
    const { reply: bigReply } = await blockIn(big, s, 1, 'acquire', { n: 3 });
    const { reply: smallReply } = await blockIn(small, s, 2, 'acquire', { n: 1 });
    const mine = s.acquireAsync(1);
    assert.equal(queued(s), 3);
    for (let i = 0; i < 5; i++) s.release(1);
    assert.equal(await withinLimit(bigReply, 'acquire(3)'), true);
    assert.equal(await withinLimit(smallReply, 'acquire(1)'), true);
    await withinLimit(mine, 'acquireAsync(1)');
    assert.equal(s.available, 0, 'the 5 permits are held by the 3 waits');
    await big.call('release', { n: 3 });
    await small.call('release', { n: 1 });
    s.release(1);
    assertIdle(s, 5);
  });

  it('a blocking wait behind its own thread\'s pending acquireAsync leaves the permit to it', { timeout: 30_000 }, async () => {
    // The Promise cannot settle while its thread is blocked, so the permit waits for it; the
    // blocking wait times out rather than take the permit out of turn or leave it free and lost.
    const s = new Semaphore();
    const agent = await startAgent(s);
    const mine = s.acquireAsync(1);
    const { started, reply } = agent.send('releaseLater', { n: 1, ms: 50 });
    await withinLimit(started, 'worker starting releaseLater');
    assert.equal(s.tryAcquire(1, 500), false, 'the earlier request is served first');
    assert.equal(await withinLimit(reply, 'releaseLater'), true);
    await withinLimit(mine, 'acquireAsync(1)');
    assert.equal(s.available, 0);
    s.release(1);
    assertIdle(s, 1);
  });

  it('a head that times out unblocks the smaller requests queued behind it', async () => {
    const s = new Semaphore(2);
    const head = assert.rejects(s.acquireAsync(5, { timeout: 10 }), TimeoutError);
    const behind = [s.acquireAsync(1), s.acquireAsync(1)];
    const tooBig = assert.rejects(s.acquireAsync(3, { timeout: 10 }), TimeoutError);
    await withinLimit(head, 'head timeout');
    await withinLimit(Promise.all(behind), 'the small requests after the head left');
    await withinLimit(tooBig, 'later timeout');
    assert.equal(s.available, 0);
    s.release(2);
    assertIdle(s, 2);
  });

  it('a head that is aborted unblocks the smaller request queued behind it', async () => {
    const s = new Semaphore(1);
    const controller = new AbortController();
    const head = s.acquireAsync(2, { signal: controller.signal });
    const behind = s.acquireAsync(1);
    controller.abort();
    await assert.rejects(withinLimit(head, 'aborted head'), { name: 'AbortError' });
    await withinLimit(behind, 'the request behind the aborted head');
    s.release(1);
    assertIdle(s, 1);
  });

  it('a blocking head in a worker that times out unblocks the request behind it', { timeout: 30_000 }, async () => {
    const s = new Semaphore(1);
    const agent = await startAgent(s);
    const { started, reply } = agent.send('tryAcquire', { n: 2, timeout: 300 });
    await withinLimit(started, 'worker starting tryAcquire');
    let replied = false;
    reply.finally(() => {
      replied = true;
    }).catch(() => {});
    await waitFor(() => queued(s) === 1 || replied, 'the worker to queue');
    // Queued behind the worker, unless the worker has timed out already; either way it resolves.
    const behind = s.acquireAsync(1);
    assert.equal(await withinLimit(reply, 'worker tryAcquire(2, 300)'), false);
    await withinLimit(behind, 'the request behind the timed-out head');
    s.release(1);
    assertIdle(s, 1);
  });
});

describe('workers', () => {
  it('K permits: never more than K in use, exact totals, mixed sync/async/try workers', { timeout: 60_000 }, async () => {
    const PERMITS = 3;
    const ITERATIONS = 5_000;
    const s = new Semaphore(PERMITS);
    const statsMemory = new SharedArrayBuffer(16);
    const stats = new Int32Array(statsMemory);
    const modes = ['sync', 'sync', 'async', 'async', 'try', 'mixed'];
    const workers = runWorkers(
      fixture('semaphore_stress.js'),
      modes.map((mode, seed) => ({
        semaphore: s,
        stats: statsMemory,
        permits: PERMITS,
        iterations: ITERATIONS,
        mode,
        seed,
      })),
    );
    // The main thread takes part too, with acquireAsync.
    let mainAcquired = 0;
    const main = (async () => {
      for (let i = 0; i < 1_000; i++) {
        const n = 1 + (i % 2);
        await s.acquireAsync(n);
        if (Atomics.add(stats, 0, n) + n > PERMITS) Atomics.add(stats, 2, 1);
        Atomics.add(stats, 3, n);
        mainAcquired += n;
        Atomics.sub(stats, 0, n);
        s.release(n);
      }
    })();
    const [done] = await withinLimit(Promise.all([workers, main]), 'stress run', 50_000);
    assert.equal(stats[2], 0, 'no acquisition ever saw more permits in use than exist');
    assert.ok(stats[1] <= PERMITS && stats[1] >= 1, `most in use: ${stats[1]}`);
    assert.equal(stats[0], 0, 'every acquisition was released');
    // Requests alternate between 1 and 2 permits; blocking and async acquirers never give up.
    const perWorker = (ITERATIONS / 2) * 3;
    modes.forEach((mode, i) => {
      assert.equal(done[i].succeeded + done[i].timedOut, ITERATIONS, mode);
      if (mode === 'sync' || mode === 'async') assert.equal(done[i].acquired, perWorker, mode);
    });
    assert.equal(mainAcquired, 1_500);
    const total = done.reduce((sum, d) => sum + d.acquired, 0) + mainAcquired;
    assert.equal(stats[3], total, 'the shared count matches what every thread acquired');
    assertIdle(s, PERMITS);
  });

  it('8 blocking workers over 2 permits, tiny sections: exact totals, never more than 2 in use', { timeout: 60_000 }, async () => {
    // More workers than permits, all blocking: waiters spin before they queue, running threads
    // take released permits past queued ones, and fair turns hand them over.
    const PERMITS = 2;
    const ITERATIONS = 4_000;
    const s = new Semaphore(PERMITS);
    const statsMemory = new SharedArrayBuffer(16);
    const stats = new Int32Array(statsMemory);
    const done = await withinLimit(runWorkers(
      fixture('semaphore_stress.js'),
      Array.from({ length: 8 }, (_, seed) => ({
        semaphore: s,
        stats: statsMemory,
        permits: PERMITS,
        iterations: ITERATIONS,
        mode: 'sync',
        seed,
      })),
    ), '8 workers over 2 permits', 50_000);
    assert.equal(stats[2], 0, 'no acquisition ever saw more permits in use than exist');
    assert.equal(stats[0], 0, 'every acquisition was released');
    for (const d of done) assert.equal(d.succeeded, ITERATIONS);
    assert.equal(stats[3], done.reduce((sum, d) => sum + d.acquired, 0));
    assertIdle(s, PERMITS);
  });

  it('try-acquirers timing out under contention leak no permits and leave no waiter', { timeout: 60_000 }, async () => {
    const s = new Semaphore(1);
    const statsMemory = new SharedArrayBuffer(16);
    const stats = new Int32Array(statsMemory);
    const results = await runWorkers(
      fixture('semaphore_stress.js'),
      [0, 1, 2, 3].map((seed) => ({
        semaphore: s,
        stats: statsMemory,
        permits: 1,
        iterations: 1_500,
        mode: seed === 0 ? 'sync' : 'try',
        seed,
      })),
    );
    const timedOut = results.reduce((sum, done) => sum + done.timedOut, 0);
    const succeeded = results.reduce((sum, done) => sum + done.succeeded, 0);
    assert.equal(stats[2], 0);
    assert.equal(stats[3], succeeded, 'one permit per successful attempt');
    assert.equal(succeeded + timedOut, 4 * 1_500, 'every attempt either acquired or timed out');
    assertIdle(s, 1);
  });

  it('terminate() of a worker blocked in acquire is prompt and leaves no waiter', { timeout: 30_000 }, async () => {
    const s = new Semaphore();
    const agent = await startAgent(s);
    const { reply } = await blockIn(agent, s, 1, 'acquire', { n: 1 });
    assert.equal(loadWord(s), WAITERS_BIT);

    const start = performance.now();
    await withinLimit(agent.terminate(), 'terminate()');
    const elapsed = performance.now() - start;
    assert.ok(elapsed < 2000, `terminate() took ${elapsed} ms`);
    await assert.rejects(reply, /exited/, 'the blocked call never returned');
    assertIdle(s, 0);

    s.release(1);
    const other = await startAgent(s);
    assert.equal(await other.call('tryAcquire', { n: 1 }), true);
    await other.call('release', { n: 1 });
    assertIdle(s, 1);
  });

  it('terminate() of a worker blocked at the head grants the smaller request behind it', { timeout: 30_000 }, async () => {
    const s = new Semaphore(1);
    const head = await startAgent(s);
    const behind = await startAgent(s);
    await blockIn(head, s, 1, 'acquire', { n: 5 });
    const { reply: behindReply } = await blockIn(behind, s, 2, 'acquire', { n: 2 });
    s.release(1); // enough for the request behind, which only the head's departure wakes
    assert.equal(queued(s), 2);
    await withinLimit(head.terminate(), 'terminate()');
    assert.equal(await withinLimit(behindReply, 'acquire(2) behind the terminated head'), true);
    assert.equal(s.available, 0);
    await behind.call('release', { n: 2 });
    assertIdle(s, 2);
  });

  it('terminate() of a worker whose acquireAsync is at the head grants the request behind it', { timeout: 30_000 }, async () => {
    const s = new Semaphore();
    const agent = await startAgent(s);
    await agent.call('startAcquireAsync', { key: 'a', n: 3 });
    assert.equal(queued(s), 1);
    // With a timeout, so that a lost grant fails this test instead of keeping the process alive.
    const mine = s.acquireAsync(1, { timeout: HANG_LIMIT_MS });
    assert.equal(queued(s), 2);
    s.release(1); // enough for mine, which only the head's departure wakes
    assert.equal(queued(s), 2);
    await withinLimit(agent.terminate(), 'terminate()');
    await withinLimit(mine, 'acquireAsync behind the terminated worker');
    s.release(1);
    assertIdle(s, 1);
  });
});

describe('permit guards: acquirePermits, tryAcquirePermits, acquirePermitsAsync', () => {
  const dispose = Symbol.dispose || Symbol.for('nodejs.dispose');
  const asyncDispose = Symbol.asyncDispose || Symbol.for('nodejs.asyncDispose');

  it('acquirePermits(n) returns a guard that releases exactly n permits, once', () => {
    const s = new Semaphore(5);
    const permits = s.acquirePermits(3);
    assert.equal(permits.permits, 3);
    assert.equal(permits.released, false);
    assert.equal(s.available, 2);
    permits.release();
    assert.equal(permits.released, true);
    assert.equal(s.available, 5);
    permits.release();
    permits[dispose]();
    assert.equal(s.available, 5, 'later calls release nothing');
    assert.equal(s.acquirePermits().permits, 1, 'n defaults to 1');
    assert.equal(s.available, 4);
    s.release(1);
    assertIdle(s, 5);
  });

  it('Symbol.dispose and Symbol.asyncDispose release the permits', async () => {
    const s = new Semaphore(2);
    const a = s.acquirePermits(2);
    a[dispose]();
    assert.equal(s.available, 2);
    const b = await s.acquirePermitsAsync(2);
    assert.equal(s.available, 0);
    assert.equal(await b[asyncDispose](), undefined);
    assert.equal(b.released, true);
    assertIdle(s, 2);
  });

  it('tryAcquirePermits returns a guard, or null when the permits are not available in time', () => {
    const s = new Semaphore(1);
    const one = s.tryAcquirePermits();
    assert.equal(one.permits, 1);
    assert.equal(s.tryAcquirePermits(), null);
    assert.equal(s.tryAcquirePermits(1, 5), null);
    one.release();
    assert.equal(s.tryAcquirePermits(1, 5).permits, 1);
    s.release(1);
    assertIdle(s, 1);
  });

  it('bad counts throw (or reject, for acquirePermitsAsync) and take nothing', async () => {
    const s = new Semaphore(1);
    for (const n of [0, -1, 1.5, MAX_PERMITS + 1]) {
      assert.throws(() => s.acquirePermits(n), RANGE_ERROR);
      assert.throws(() => s.tryAcquirePermits(n), RANGE_ERROR);
      await assert.rejects(s.acquirePermitsAsync(n), RANGE_ERROR);
    }
    for (const n of ['1', null, {}]) {
      assert.throws(() => s.acquirePermits(n), TYPE_ERROR);
      await assert.rejects(s.acquirePermitsAsync(n), TYPE_ERROR);
    }
    await assert.rejects(s.acquirePermitsAsync(1, { timeout: 'soon' }), TYPE_ERROR);
    assertIdle(s, 1);
  });

  it('acquirePermitsAsync waits for a worker to release, then holds the permits', async () => {
    const s = new Semaphore(2);
    const agent = await startAgent(s);
    assert.equal(await agent.call('tryAcquire', { n: 2 }), true);
    const waiting = s.acquirePermitsAsync(2, { timeout: HANG_LIMIT_MS });
    assert.equal(queued(s), 1);
    assert.equal(await isSettled(waiting), false);
    await agent.call('release', { n: 2 });
    const permits = await withinLimit(waiting, 'acquirePermitsAsync');
    assert.equal(s.available, 0);
    assert.equal(await agent.call('tryAcquire', { n: 1 }), false);
    permits.release();
    assertIdle(s, 2);
  });

  it('acquirePermitsAsync rejects with TimeoutError, taking nothing', async () => {
    const s = new Semaphore(0);
    await assert.rejects(s.acquirePermitsAsync(1, { timeout: 5 }), { name: 'TimeoutError', code: 'ERR_PARKLOCK_TIMEOUT' });
    assertIdle(s, 0);
  });
});

describe('Semaphore#executeLocked', () => {
  it('runs fn holding n permits and releases them after a result, a throw or a rejection', async () => {
    const s = new Semaphore(3);
    assert.equal(await s.executeLocked(() => s.available, 2), 1);
    assert.equal(await s.executeLocked(async () => {
      await tick(1);
      return s.available;
    }), 2, 'n defaults to 1');
    const error = new Error('fn failed');
    await assert.rejects(s.executeLocked(() => {
      throw error;
    }, 3), (e) => e === error);
    await assert.rejects(s.executeLocked(async () => {
      await tick(1);
      throw error;
    }, 3), (e) => e === error);
    assertIdle(s, 3);
  });

  it('bounds concurrency to the permits', async () => {
    const s = new Semaphore(2);
    let running = 0;
    let most = 0;
    const task = () => s.executeLocked(async () => {
      running += 1;
      most = Math.max(most, running);
      await tick(1);
      running -= 1;
    }, 1, { timeout: HANG_LIMIT_MS });
    await withinLimit(Promise.all(Array.from({ length: 10 }, task)), 'ten tasks');
    assert.equal(most, 2);
    assertIdle(s, 2);
  });

  it('rejects a bad fn, a bad n or bad options without taking permits or calling fn', async () => {
    const s = new Semaphore(1);
    let calls = 0;
    const fn = () => calls++;
    for (const bad of [undefined, null, 'fn', {}]) await assert.rejects(s.executeLocked(bad), TYPE_ERROR);
    await assert.rejects(s.executeLocked(fn, 0), RANGE_ERROR);
    await assert.rejects(s.executeLocked(fn, 1.5), RANGE_ERROR);
    await assert.rejects(s.executeLocked(fn, '1'), TYPE_ERROR);
    await assert.rejects(s.executeLocked(fn, 1, { timeout: -1 }), RANGE_ERROR);
    await assert.rejects(s.executeLocked(fn, 1, null), TYPE_ERROR);
    assert.equal(calls, 0);
    assertIdle(s, 1);
  });

  it('waits for a worker to release; a timeout rejects without calling fn', async () => {
    const s = new Semaphore(1);
    const agent = await startAgent(s);
    assert.equal(await agent.call('tryAcquire', { n: 1 }), true);
    let calls = 0;
    await assert.rejects(s.executeLocked(() => calls++, 1, { timeout: 10 }), { name: 'TimeoutError' });
    assert.equal(calls, 0);
    const later = s.executeLocked(() => ++calls, 1, { timeout: HANG_LIMIT_MS });
    assert.equal(await isSettled(later), false);
    await agent.call('release', { n: 1 });
    assert.equal(await withinLimit(later, 'executeLocked'), 1);
    assertIdle(s, 1);
  });
});

describe('Semaphore#cancelPendingWaits', () => {
  const { pendingWaitCount } = require('../lib/async_waits');

  it('rejects every pending wait of this thread; a worker then gets the permits', async () => {
    const s = new Semaphore(0);
    const agent = await startAgent(s);
    let ran = false;
    const waits = [
      s.acquireAsync(),
      s.acquireAsync(2, { timeout: HANG_LIMIT_MS }),
      s.acquirePermitsAsync(1, { signal: new AbortController().signal }),
      s.executeLocked(() => {
        ran = true;
      }),
    ];
    assert.equal(queued(s), 4);
    const reason = new Error('shutting down');
    assert.equal(s.cancelPendingWaits(reason), 4);
    for (const [i, wait] of waits.entries()) {
      await assert.rejects(withinLimit(wait, `wait #${i}`), (e) => e === reason);
    }
    assert.equal(ran, false);
    assert.equal(queued(s), 0, 'nothing stays queued');
    assert.equal(pendingWaitCount(s), 0);
    assertIdle(s, 0);
    s.release(1);
    assert.equal(await agent.call('tryAcquire', { n: 1 }), true, 'no cancelled wait took the permit');
    await agent.call('release', { n: 1 });
    assertIdle(s, 1);
  });

  it('rejects with ERR_PARKLOCK_CANCELLED by default and leaves a worker\'s waits alone', async () => {
    const s = new Semaphore(0);
    const agent = await startAgent(s);
    await agent.call('startAcquireAsync', { key: 'w', n: 1 });
    const mine = s.acquireAsync();
    assert.equal(queued(s), 2);
    assert.equal(s.cancelPendingWaits(), 1);
    await assert.rejects(mine, { code: 'ERR_PARKLOCK_CANCELLED' });
    s.release(1);
    assert.equal(await agent.call('settle', { key: 'w' }), 'acquired');
    await agent.call('release', { n: 1 });
    assertIdle(s, 1);
  });
});
