'use strict';
// locks: the process's own lock manager, shared by every thread. The Web Locks behaviour (as
// Node's own worker_threads.locks tests and the Web Platform Tests' web-locks/ check it), the
// blocking and try forms, names, and threads that end holding or waiting.
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { Worker } = require('node:worker_threads');
const { locks, LockManager, Lock, TimeoutError, inspect, watchdog } = require('../lib');
const { fixture, waitFor, withinLimit, exitIfKeptAlive, messageFrom } = require('./helpers');

exitIfKeptAlive();

const AGENT = fixture('named_lock_agent.js');
let unique = 0;
const fresh = (what = 'name') => `${what}-${process.pid}-${(unique += 1)}`;
const tick = () => new Promise(setImmediate);

// A request that holds `name` until release() is called; resolves `held` once it holds it.
function holding(name, options = {}) {
  let release;
  let lock;
  const done = new Promise((resolve) => {
    release = resolve;
  });
  const held = new Promise((resolve) => {
    lock = locks.request(name, options, (granted) => {
      resolve(granted);
      return done;
    });
  });
  return { held, release, request: lock };
}

async function queryOf(name) {
  const { held, pending } = await locks.query();
  return { held: held.filter((entry) => entry.name === name), pending: pending.filter((entry) => entry.name === name) };
}

async function assertUnused(name) {
  assert.deepEqual(await queryOf(name), { held: [], pending: [] });
}

function startAgent(task) {
  const worker = new Worker(AGENT, { workerData: task });
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  return { worker, exited };
}

describe('locks.request(): the Web Locks API', () => {
  it('calls the callback later, never inside request()', async () => {
    let called = false;
    const request = locks.request(fresh(), () => {
      called = true;
    });
    assert.equal(called, false);
    await request;
    assert.equal(called, true);
  });

  it('settles with the callback result, and the lock has a name and mode', async () => {
    const name = fresh();
    const result = await locks.request(name, (lock) => {
      assert.ok(lock instanceof Lock);
      assert.equal(lock.name, name);
      assert.equal(lock.mode, 'exclusive');
      assert.equal(lock.ownerDied, false);
      assert.equal(lock.deadOwner, null);
      return 42;
    });
    assert.equal(result, 42);
    assert.equal(await locks.request(name, { mode: 'shared' }, async (lock) => lock.mode), 'shared');
    await assertUnused(name);
  });

  it('holds the lock until the callback promise settles, and rejects with what it throws', async () => {
    const name = fresh();
    const failure = new Error('inside');
    const first = locks.request(name, async () => {
      await tick();
      throw failure;
    });
    const firstSettled = assert.rejects(first, failure);
    let secondRan = false;
    const second = locks.request(name, () => {
      secondRan = true;
    });
    await tick();
    assert.equal(secondRan, false);
    await firstSettled;
    await second;
    assert.equal(secondRan, true);
    await assertUnused(name);
  });

  it('grants exclusive requests in order, shared ones together, and a queued exclusive holds back later shared ones', async () => {
    const name = fresh();
    const order = [];
    const first = holding(name);
    await first.held;
    const requests = [
      locks.request(name, { mode: 'shared' }, async () => {
        order.push('s1 start');
        await tick();
        await tick();
        order.push('s1 end');
      }),
      locks.request(name, { mode: 'shared' }, async () => {
        order.push('s2 start');
        await tick();
        order.push('s2 end');
      }),
      locks.request(name, () => order.push('x')),
      locks.request(name, { mode: 'shared' }, () => order.push('s3')),
    ];
    const { held, pending } = await queryOf(name);
    assert.equal(held.length, 1);
    assert.deepEqual(pending.map((entry) => entry.mode), ['shared', 'shared', 'exclusive', 'shared']);
    first.release();
    await Promise.all(requests);
    assert.deepEqual(order.slice(-2), ['x', 's3']);
    assert.ok(order.indexOf('s2 start') < order.indexOf('s1 end'), `shared holders overlap: ${order}`);
    await assertUnused(name);
  });

  it('ifAvailable calls back with null when the name is held or waited for', async () => {
    const name = fresh();
    assert.equal(await locks.request(name, { ifAvailable: true }, (lock) => lock.name), name);
    const first = holding(name);
    await first.held;
    assert.equal(await locks.request(name, { ifAvailable: true }, (lock) => lock), null);
    assert.equal(await locks.request(name, { ifAvailable: true, mode: 'shared' }, (lock) => lock), null);
    first.release();
    await first.request;
    const shared = holding(name, { mode: 'shared' });
    await shared.held;
    assert.equal(await locks.request(name, { ifAvailable: true, mode: 'shared' }, (lock) => lock.mode), 'shared');
    shared.release();
    await shared.request;
    await assertUnused(name);
  });

  it('steal takes the name from its holders at once; their request rejects with an AbortError', async () => {
    const name = fresh();
    const victim = holding(name);
    await victim.held;
    const waiting = locks.request(name, () => 'waited');
    assert.equal(await locks.request(name, { steal: true }, (lock) => lock.mode), 'exclusive');
    // Rejected at once, while its callback still runs.
    await assert.rejects(victim.request, { name: 'AbortError' });
    victim.release();
    assert.equal(await waiting, 'waited');
    await assertUnused(name);
  });

  it('a signal aborted before or while queued rejects with its reason and takes nothing', async () => {
    const name = fresh();
    const reason = new Error('stop');
    await assert.rejects(locks.request(name, { signal: AbortSignal.abort(reason) }, () => {}), reason);
    const first = holding(name);
    await first.held;
    const controller = new AbortController();
    const aborted = locks.request(name, { signal: controller.signal }, () => assert.fail('granted'));
    const after = locks.request(name, () => 'after');
    await tick();
    controller.abort(reason);
    await assert.rejects(aborted, reason);
    assert.equal((await queryOf(name)).pending.length, 1);
    first.release();
    assert.equal(await after, 'after');
    await assertUnused(name);
  });

  it('timeout rejects with a TimeoutError having taken nothing', async () => {
    const name = fresh();
    const first = holding(name);
    await first.held;
    const started = Date.now();
    const error = await locks.request(name, { timeout: 50 }, () => assert.fail('granted')).catch((caught) => caught);
    assert.ok(error instanceof TimeoutError);
    assert.equal(error.code, 'ERR_PARKLOCK_TIMEOUT');
    assert.ok(Date.now() - started >= 45);
    assert.equal((await queryOf(name)).pending.length, 0);
    first.release();
    await first.request;
    await assertUnused(name);
  });

  it('refuses what the specification refuses, with its errors', async () => {
    const notSupported = { name: 'NotSupportedError' };
    await assert.rejects(locks.request('-reserved', () => {}), notSupported);
    await assert.rejects(locks.request('n', { steal: true, ifAvailable: true }, () => {}), notSupported);
    await assert.rejects(locks.request('n', { steal: true, mode: 'shared' }, () => {}), notSupported);
    await assert.rejects(locks.request('n', { steal: true, signal: new AbortController().signal }, () => {}), notSupported);
    await assert.rejects(locks.request('n', { ifAvailable: true, signal: new AbortController().signal }, () => {}), notSupported);
    await assert.rejects(locks.request('n', { ifAvailable: true, timeout: 5 }, () => {}), notSupported);
    await assert.rejects(locks.request('n'), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    await assert.rejects(locks.request('n', {}, 'not a function'), { name: 'TypeError' });
    await assert.rejects(locks.request('n', { mode: 'other' }, () => {}), { name: 'TypeError' });
    await assert.rejects(locks.request('n', { timeout: -1 }, () => {}), { code: 'ERR_OUT_OF_RANGE' });
    assert.equal(await locks.request('n', null, (lock) => lock.mode), 'exclusive');
    assert.throws(() => locks.lock('-x'), notSupported);
    assert.throws(() => locks.tryLock('n', { mode: 'both' }), { name: 'TypeError' });
    await assertUnused('n');
  });

  it('query() reports every held and pending request with its thread and process', async () => {
    const name = fresh();
    const first = holding(name, { mode: 'shared' });
    await first.held;
    const second = locks.request(name, () => {});
    const { held, pending } = await queryOf(name);
    const me = { name, clientId: `${process.pid}:0`, threadId: 0, pid: process.pid };
    assert.deepEqual(held, [{ ...me, mode: 'shared' }]);
    assert.deepEqual(pending, [{ ...me, mode: 'exclusive' }]);
    first.release();
    await second;
    await assertUnused(name);
  });
});

describe('locks.lock() and locks.tryLock()', () => {
  it('return guards that release once, also through using', async () => {
    const name = fresh();
    const guard = locks.lock(name);
    assert.equal(guard.name, name);
    assert.equal(guard.mode, 'exclusive');
    assert.equal(guard.ownerDied, false);
    assert.equal(locks.tryLock(name), null);
    guard.unlock();
    guard.unlock();
    assert.equal(guard.released, true);
    {
      const shared = locks.tryLock(name, { mode: 'shared' });
      const other = locks.tryLock(name, { mode: 'shared' });
      assert.equal(locks.tryLock(name), null);
      shared[Symbol.dispose]();
      other.unlock();
    }
    await assertUnused(name);
  });

  it('a blocking lock() of a name this thread holds through a request is refused as a deadlock', async () => {
    const name = fresh();
    const first = holding(name);
    await first.held;
    assert.throws(() => locks.lock(name), { code: 'ERR_PARKLOCK_DEADLOCK' });
    assert.throws(() => locks.lock(name, { mode: 'shared' }), { code: 'ERR_PARKLOCK_DEADLOCK' });
    assert.equal((await queryOf(name)).pending.length, 0);
    first.release();
    await first.request;
  });

  it('lock() with a timeout throws a TimeoutError having taken nothing', async () => {
    const name = fresh();
    const { worker, exited } = startAgent({ kind: 'hold', name, blocking: true });
    await messageFrom(worker, (message) => message.held);
    assert.throws(() => locks.lock(name, { timeout: 30 }), TimeoutError);
    assert.equal((await queryOf(name)).pending.length, 0);
    await worker.terminate();
    await exited;
    locks.lock(name).unlock();
    await assertUnused(name);
  });
});

describe('names', () => {
  it('are strings of up to 256 UTF-16 code units, compared exactly', async () => {
    const long = 'n'.repeat(256);
    assert.equal(await locks.request(long, (lock) => lock.name), long);
    await assert.rejects(locks.request(`${long}x`, () => {}), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
    // Distinct strings that one UTF-8 encoding would make one (a lone surrogate) stay two names.
    const lone = locks.lock('\uD800');
    const replacement = locks.tryLock('\uFFFD');
    assert.notEqual(replacement, null);
    replacement.unlock();
    lone.unlock();
    assert.equal(await locks.request(7, (lock) => lock.name), '7');
  });

  it('10,000 names are held at once, none blocks another, and all are freed after', async () => {
    const names = Array.from({ length: 10_000 }, (_, i) => `many-${process.pid}-${i}`);
    const guards = names.map((name) => locks.lock(name));
    assert.ok(guards.every((guard) => guard.name.startsWith('many-')));
    const { held } = await locks.query();
    assert.equal(held.filter((entry) => entry.name.startsWith('many-')).length, 10_000);
    const asyncHeld = names.slice(0, 100).map((name) => holding(`${name}-async`));
    await Promise.all(asyncHeld.map((h) => h.held));
    for (const guard of guards) guard.unlock();
    for (const h of asyncHeld) h.release();
    await Promise.all(asyncHeld.map((h) => h.request));
    const after = await locks.query();
    assert.equal(after.held.filter((entry) => entry.name.startsWith('many-')).length, 0);
  });

  it('a full table refuses the next name with a coded error, never a wrong grant', async () => {
    const guards = [];
    let refused;
    for (let i = 0; i < 20_000 && refused === undefined; i += 1) {
      try {
        guards.push(locks.lock(`full-${process.pid}-${i}`));
      } catch (error) {
        refused = error;
      }
    }
    assert.equal(refused?.code, 'ERR_PARKLOCK_LOCK_TABLE_FULL');
    assert.equal(guards.length, 16_384);
    // A name already in the table still waits for its holder, full or not.
    assert.equal(locks.tryLock(guards[0].name), null);
    for (const guard of guards) guard.unlock();
    const guard = locks.lock('after the table was full');
    guard.unlock();
  });

  it('methods called on something other than a LockManager are refused with a code', async () => {
    const { request, lock } = locks;
    await assert.rejects(request('x', () => {}), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => lock.call({}, 'x'), { code: 'ERR_INVALID_ARG_TYPE' });
  });

  it('100,000 names used one after another never fill the table', async () => {
    for (let i = 0; i < 100_000; i += 1) locks.lock(`sequential-${i}`).unlock();
    const { held, pending } = await locks.query();
    assert.equal(held.length + pending.length, 0);
  });
});

describe('threads', () => {
  it('the main thread and 4 workers count exactly under one name, blocking and with Promises', async () => {
    for (const blocking of [false, true]) {
      const counter = new SharedArrayBuffer(4);
      const name = fresh('count');
      const times = 2_000;
      const agents = [0, 1, 2, 3].map(() => startAgent({ kind: 'count', name, times, blocking, counter }));
      const words = new Int32Array(counter);
      for (let i = 0; i < times; i += 1) {
        await locks.request(name, () => {
          words[0] += 1;
        });
      }
      await withinLimit(Promise.all(agents.map((agent) => agent.exited)), 'the counting workers');
      assert.equal(words[0], 5 * times, blocking ? 'blocking' : 'Promise');
      await assertUnused(name);
    }
  });

  it('a worker terminated holding a name: the next holder is told, once, and later ones are not', async () => {
    for (const blocking of [false, true]) {
      const name = fresh('died');
      const { worker, exited } = startAgent({ kind: 'hold', name, blocking });
      await messageFrom(worker, (message) => message.held);
      const deadThread = worker.threadId;
      const next = locks.request(name, (lock) => ({ ownerDied: lock.ownerDied, deadOwner: lock.deadOwner }));
      await worker.terminate();
      await exited;
      assert.deepEqual(await withinLimit(next, 'the next holder'), {
        ownerDied: true,
        deadOwner: { pid: process.pid, threadId: deadThread },
      });
      assert.equal(await locks.request(name, (lock) => lock.ownerDied), false);
      await assertUnused(name);
    }
  });

  it('a worker terminated while queued leaves nothing behind; those behind it are served', async () => {
    const name = fresh('queued');
    const first = holding(name);
    await first.held;
    const { worker, exited } = startAgent({ kind: 'acquire', name });
    await messageFrom(worker, (message) => message.queued);
    const behind = locks.request(name, (lock) => lock.ownerDied);
    await worker.terminate();
    await exited;
    first.release();
    assert.equal(await withinLimit(behind, 'the request behind'), false);
    await waitFor(async () => (await queryOf(name)).pending.length === 0, 'the ended request to go');
    await assertUnused(name);
  });

  it('a pending request keeps its worker alive until it is granted', async () => {
    const name = fresh('alive');
    const first = holding(name);
    await first.held;
    const { worker, exited } = startAgent({ kind: 'acquire', name });
    const acquired = messageFrom(worker, (message) => message.acquired);
    await messageFrom(worker, (message) => message.queued);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal((await queryOf(name)).pending.length, 1, 'the worker exited with its request pending');
    first.release();
    await withinLimit(acquired, 'the worker to be granted');
    await exited;
  });

  it('worker.terminate() ends a worker blocked in lock()', async () => {
    const name = fresh('blocked');
    const guard = locks.lock(name);
    const { worker, exited } = startAgent({ kind: 'acquire', name, blocking: true });
    await waitFor(async () => (await queryOf(name)).pending.length === 1, 'the worker to block');
    await withinLimit(worker.terminate(), 'terminate()');
    await exited;
    guard.unlock();
    await waitFor(async () => (await queryOf(name)).pending.length === 0, 'the ended request to go');
    await assertUnused(name);
  });
});

describe('deadlocks', () => {
  it('two workers each blocked for the name the other holds: one gives up with the cycle, the other goes on', async () => {
    const [a, b] = [fresh('a'), fresh('b')];
    const counter = new SharedArrayBuffer(8);
    const agents = [
      startAgent({ kind: 'crossLock', first: a, second: b, counter, agents: 2 }),
      startAgent({ kind: 'crossLock', first: b, second: a, counter, agents: 2 }),
    ];
    const reports = await withinLimit(
      Promise.all(agents.map(({ worker }) => messageFrom(worker, (message) => message.granted || message.code))),
      'the deadlock to be found',
    );
    await Promise.all(agents.map(({ exited }) => exited));
    const refused = reports.filter((report) => report.code === 'ERR_PARKLOCK_DEADLOCK');
    assert.ok(refused.length >= 1, JSON.stringify(reports));
    const cycle = refused[0].cycle;
    assert.equal(cycle.length, 2);
    assert.deepEqual(cycle.map((step) => step.waitsFor).sort(), [a, b].sort());
    assert.ok(cycle.every((step) => step.pid === process.pid));
    await assertUnused(a);
    await assertUnused(b);
  });
});

describe('diagnostics', () => {
  it('inspect() and watchdog() name the lock a request waits for, its mode, holders and whole wait', async () => {
    const name = fresh('inspected');
    const guard = locks.lock(name);
    const waiting = locks.request(name, { mode: 'shared' }, () => {});
    await new Promise((resolve) => setTimeout(resolve, 80));
    const entry = inspect().find((candidate) => candidate.name === name);
    assert.equal(entry.kind, 'named lock');
    assert.equal(entry.mode, 'shared');
    assert.equal(entry.path, null);
    assert.deepEqual(entry.holders, [{ pid: process.pid, threadId: 0, mode: 'exclusive' }]);
    assert.equal(entry.holder, 0);
    assert.equal(entry.waiters.length, 1);
    assert.equal(entry.waiters[0].request, 'shared');
    // The wait is re-armed in slices; what is reported is the whole wait.
    assert.ok(entry.waiters[0].waitedMs >= 70, `waited ${entry.waiters[0].waitedMs} ms`);
    const stalled = await new Promise((resolve) => {
      const dog = watchdog({
        thresholdMs: 50,
        intervalMs: 10,
        onStall: (entries) => {
          dog.stop();
          resolve(entries);
        },
      });
    });
    assert.ok(stalled.some((candidate) => candidate.name === name));
    guard.unlock();
    await waiting;
  });
});

describe('LockManager', () => {
  it('locks is a LockManager without a path', () => {
    assert.ok(locks instanceof LockManager);
    assert.equal(locks.path, null);
  });

  it('a request behind a live holder stays pending however long it holds', async () => {
    const name = fresh();
    const first = holding(name);
    await first.held;
    const second = locks.request(name, () => 'second');
    const raced = await Promise.race([second, new Promise((resolve) => setTimeout(resolve, 100, 'pending'))]);
    assert.equal(raced, 'pending');
    first.release();
    assert.equal(await second, 'second');
  });
});
