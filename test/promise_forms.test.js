'use strict';
// Every method that returns a Promise reports every error, bad arguments included, by rejecting
// that Promise, never by throwing (Node's convention), and a rejected call takes nothing.
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { Mutex, RWLock, Semaphore, Condition, Latch, Once, Barrier, futex } = require('../lib');
const { pendingCount } = require('../lib/async_waits');
const { exitIfKeptAlive } = require('./helpers');
const { WAIT_CASES } = require('./wait_cases');

exitIfKeptAlive();

const INVALID = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' };
const RANGE = { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' };

// call() must return a Promise (not throw) that rejects as `expected` says.
async function assertRejectsWithoutThrowing(call, expected, what) {
  let result;
  assert.doesNotThrow(() => {
    result = call();
  }, `${what} threw synchronously`);
  assert.ok(result instanceof Promise, `${what} returned a Promise`);
  await assert.rejects(result, expected, what);
}

function revokedProxy() {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

const BAD_OPTIONS = [
  [null, INVALID],
  [5, INVALID],
  ['x', INVALID],
  [{ timeout: 'x' }, INVALID],
  [{ timeout: null }, INVALID],
  [{ timeout: -1 }, RANGE],
  [{ timeout: NaN }, RANGE],
  [{ signal: {} }, INVALID],
  [{ signal: null }, INVALID],
  [{ signal: new EventTarget() }, INVALID],
];

describe('bad options: every Promise form rejects and takes nothing', () => {
  for (const waitCase of WAIT_CASES) {
    it(waitCase.name, async () => {
      for (const [i, [options, expected]] of [...BAD_OPTIONS, [revokedProxy(), INVALID]].entries()) {
        const ctx = waitCase.setup();
        await assertRejectsWithoutThrowing(() => ctx.wait(options), expected, `${waitCase.name}, bad options #${i}`);
        assert.equal(ctx.queued(), 0);
        assert.equal(pendingCount(), 0);
        await ctx.release();
        ctx.assertUntaken();
      }
    });
  }
});

describe('bad arguments other than options', () => {
  it('Semaphore#acquireAsync rejects a bad count', async () => {
    const s = new Semaphore(1);
    for (const n of [0, -1, 1.5, Semaphore.MAX_PERMITS + 1]) {
      await assertRejectsWithoutThrowing(() => s.acquireAsync(n), RANGE, `acquireAsync(${n})`);
    }
    for (const n of ['1', null, {}]) {
      await assertRejectsWithoutThrowing(() => s.acquireAsync(n), INVALID, `acquireAsync(${String(n)})`);
    }
    assert.equal(s.available, 1);
  });

  it('Condition#waitAsync rejects a non-Mutex and a mutex this thread does not hold', async () => {
    const c = new Condition();
    const m = new Mutex();
    for (const [i, mutex] of [undefined, {}, Object.create(Mutex.prototype), revokedProxy(), new Proxy(m, {})].entries()) {
      await assertRejectsWithoutThrowing(() => c.waitAsync(mutex), INVALID, `bad mutex #${i}`);
    }
    await assertRejectsWithoutThrowing(() => c.waitAsync(m), { code: 'ERR_PARKLOCK_NOT_OWNER' }, 'not owner');
    assert.equal(m.isLocked, false);
  });

  it('futex.waitAsync rejects a bad array, index or expected value', async () => {
    const a = new Int32Array(new SharedArrayBuffer(8));
    const calls = [
      [() => futex.waitAsync(new Int32Array(2), 0, 0), INVALID],
      [() => futex.waitAsync(revokedProxy(), 0, 0), INVALID],
      [() => futex.waitAsync(a, 2, 0), RANGE],
      [() => futex.waitAsync(a, '0', 0), INVALID],
      [() => futex.waitAsync(a, 0, 'x'), INVALID],
    ];
    for (const [call, expected] of calls) await assertRejectsWithoutThrowing(call, expected, String(call));
  });

  it("a guard's Symbol.asyncDispose rejects where unlock() would throw", async () => {
    const asyncDispose = Symbol.asyncDispose || Symbol.for('nodejs.asyncDispose');
    const m = new Mutex();
    const guard = m.lock();
    m.unlock(); // behind the guard's back
    await assertRejectsWithoutThrowing(() => guard[asyncDispose](), { code: 'ERR_PARKLOCK_NOT_OWNER' }, 'asyncDispose');
  });

  // The uncontended call without options takes a shortcut past the options checks; it must
  // still reject a receiver of the wrong class rather than throw.
  it('a Promise form called on the wrong receiver, without options, rejects', async () => {
    const calls = [
      ['Mutex#lockAsync', () => Mutex.prototype.lockAsync.call({})],
      ['Mutex#lockAsync (Mutex.prototype)', () => Mutex.prototype.lockAsync.call(Object.create(Mutex.prototype))],
      ['Semaphore#acquireAsync', () => Semaphore.prototype.acquireAsync.call({})],
      ['Mutex#executeLocked', () => Mutex.prototype.executeLocked.call({}, () => {})],
      ['Mutex#executeLocked (undefined)', () => Mutex.prototype.executeLocked.call(undefined, () => {})],
      ['RWLock#lockAsync', () => RWLock.prototype.lockAsync.call({})],
      ['RWLock#executeLocked', () => RWLock.prototype.executeLocked.call(Object.create(RWLock.prototype), () => {})],
      ['RWLock#executeShared', () => RWLock.prototype.executeShared.call({}, () => {})],
      ['RWLock#executeShared (a Mutex)', () => RWLock.prototype.executeShared.call(new Mutex(), () => {})],
    ];
    for (const [what, call] of calls) await assertRejectsWithoutThrowing(call, { name: 'TypeError' }, what);
  });

  it('the Promise forms keep their names and lengths', () => {
    assert.equal(Mutex.prototype.lockAsync.name, 'lockAsync');
    assert.equal(Mutex.prototype.lockAsync.length, 1);
    assert.equal(Mutex.prototype.executeLocked.length, 2);
    assert.equal(RWLock.prototype.executeShared.length, 2);
    assert.equal(Semaphore.prototype.acquireAsync.length, 0);
    assert.equal(futex.waitAsync.name, 'waitAsync');
    assert.equal(futex.waitAsync.length, 4);
  });
});

it('the cases above cover every Promise-returning method', () => {
  const covered = new Set(WAIT_CASES.map(({ name }) => name));
  const methods = ['futex.waitAsync'];
  for (const Class of [Mutex, RWLock, Semaphore, Condition, Latch, Once, Barrier]) {
    for (const key of Object.getOwnPropertyNames(Class.prototype)) {
      if (key.endsWith('Async') || ['executeLocked', 'executeShared', 'waitForUnlock'].includes(key)) methods.push(`${Class.name}#${key}`);
    }
  }
  for (const key of Object.keys(futex)) {
    if (key.endsWith('Async')) assert.ok(methods.includes(`futex.${key}`), `futex.${key}`);
  }
  for (const method of methods) assert.ok(covered.has(method), `${method} has a case in wait_cases.js`);
});
