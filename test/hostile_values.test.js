'use strict';
// Hostile values as arguments (revoked Proxies, Proxies around memory, objects made from the
// built-in prototypes, getters that throw): every error is parklock's, with a `code` (or is the
// caller's own exception, thrown by the caller's getter), and nothing is taken or corrupted.
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { Mutex, RWLock, Semaphore, Condition, Latch, Once, Barrier, futex } = require('../lib');
const dc = require('node:diagnostics_channel');
const { exitIfKeptAlive, queued, withinLimit } = require('./helpers');
const native = require('../lib/native');
const { pendingCount } = require('../lib/async_waits');

exitIfKeptAlive();

const MINE = new Error("the caller's own getter");

function hostileValues() {
  const sab = new SharedArrayBuffer(64);
  const { proxy: revoked, revoke } = Proxy.revocable({}, {});
  revoke();
  const throwing = { get buffer() { throw MINE; }, get byteOffset() { throw MINE; } };
  return {
    'a revoked Proxy': revoked,
    'a Proxy around a SharedArrayBuffer': new Proxy(sab, {}),
    'a Proxy around an Int32Array': new Proxy(new Int32Array(sab), {}),
    'an object made from SharedArrayBuffer.prototype': Object.create(SharedArrayBuffer.prototype),
    'an object made from Int32Array.prototype': Object.create(Int32Array.prototype),
    'an object made from DataView.prototype': Object.create(DataView.prototype),
    'an object whose prototype is a revoked Proxy': Object.create(revoked),
    'a record with a revoked Proxy as buffer': { buffer: revoked, byteOffset: 0 },
    'a record with throwing getters': throwing,
    'a SharedArrayBuffer lying about its byteLength': Object.defineProperty(new SharedArrayBuffer(4), 'byteLength', { value: 4096 }),
  };
}

// call() either succeeds or throws an error with a code, or the caller's own MINE.
function assertCodedOrMine(call, what) {
  try {
    call();
  } catch (error) {
    if (error === MINE) return;
    assert.ok(error instanceof Error, `${what}: threw a non-Error`);
    assert.equal(typeof error.code, 'string', `${what}: ${error.name} "${error.message}" has no code`);
  }
}

const CONSTRUCTORS = {
  Mutex: (...args) => new Mutex(...args),
  RWLock: (...args) => new RWLock(...args),
  Semaphore: (...args) => new Semaphore(...args),
  Condition: (...args) => new Condition(...args),
  Latch: (...args) => new Latch(...args),
  Once: (...args) => new Once(...args),
  Barrier: (...args) => new Barrier(...args),
  'Semaphore.init': (buffer, byteOffset) => Semaphore.init(buffer, byteOffset ?? 0, 1),
  'Latch.init': (buffer, byteOffset) => Latch.init(buffer, byteOffset ?? 0, 1),
  'Barrier.init': (buffer, byteOffset) => Barrier.init(buffer, byteOffset ?? 0, 1),
};

describe('hostile values', () => {
  it('as the memory or the byteOffset of every constructor and init()', () => {
    for (const [name, construct] of Object.entries(CONSTRUCTORS)) {
      for (const [kind, value] of Object.entries(hostileValues())) {
        assertCodedOrMine(() => construct(value), `${name}(${kind})`);
        assertCodedOrMine(() => construct(value, 8), `${name}(${kind}, 8)`);
        assertCodedOrMine(() => construct(new SharedArrayBuffer(64), value), `${name}(sab, ${kind})`);
      }
    }
  });

  it('objects made from a primitive prototype or wrapped in a Proxy are not that primitive', () => {
    const c = new Condition();
    const m = new Mutex();
    for (const mutex of [Object.create(Mutex.prototype), new Proxy(m, {}), ...Object.values(hostileValues())]) {
      assertCodedOrMine(() => c.wait(mutex, 0), 'Condition#wait');
    }
    assert.equal(m.isLocked, false);
  });

  it('as the array of futex.wait and futex.notify', () => {
    for (const [kind, value] of Object.entries(hostileValues())) {
      assertCodedOrMine(() => futex.wait(value, 0, 1, 0), `futex.wait(${kind})`);
      assertCodedOrMine(() => futex.notify(value, 0), `futex.notify(${kind})`);
    }
    // An Int32Array over an ArrayBuffer, claiming a SharedArrayBuffer as its own `buffer`.
    const lying = Object.defineProperty(new Int32Array(4), 'buffer', { value: new SharedArrayBuffer(16) });
    assert.throws(() => futex.wait(lying, 0, 0, 0), { code: 'ERR_INVALID_ARG_TYPE' });
    // An Int32Array claiming more elements than it has.
    const long = Object.defineProperty(new Int32Array(new SharedArrayBuffer(4)), 'length', { value: 1000 });
    assert.throws(() => futex.notify(long, 500), { code: 'ERR_OUT_OF_RANGE' });
  });

  it('as options and signals: the Promise forms reject with a code, and the lock stays usable', async () => {
    const m = new Mutex();
    const holder = m.lock();
    const { proxy: revoked, revoke } = Proxy.revocable({}, {});
    revoke();
    const bad = [
      revoked,
      Object.create(revoked),
      { signal: revoked },
      { signal: new Proxy(new AbortController().signal, { get() { throw new TypeError('trap'); } }) },
      { get timeout() { throw MINE; } },
      { signal: { get aborted() { throw MINE; } } },
    ];
    for (const options of bad) {
      await assert.rejects(m.lockAsync(options), (error) => error === MINE || typeof error.code === 'string');
      assert.throws(() => m.tryLock(revoked), { code: 'ERR_INVALID_ARG_TYPE' });
    }
    holder.unlock();
    m.lock().unlock();
    assert.equal(m.isLocked, false);
  });

  // A 'parklock:wait:start' subscriber runs while the Promise wait is being set up, after the addon
  // has queued it: an abort from there must still take it out of the addon's queue, or it stays
  // queued (keeping the thread alive) and later takes what it waited for for nobody.
  describe('a signal aborted by a wait:start subscriber', () => {
    const WAITS = {
      'Mutex#lockAsync': () => {
        const mutex = new Mutex();
        const holder = mutex.lock();
        return {
          start: (signal) => mutex.lockAsync({ signal }),
          queued: () => queued(mutex),
          release: () => holder.unlock(),
          check: () => assert.equal(mutex.isLocked, false, 'the aborted wait took nothing'),
        };
      },
      'Semaphore#acquireAsync': () => {
        const semaphore = new Semaphore(1);
        semaphore.acquire();
        const word = new Int32Array(semaphore.buffer, semaphore.byteOffset, 1);
        return {
          start: (signal) => semaphore.acquireAsync(1, { signal }),
          queued: () => native.queuedCount(word, 0),
          release: () => semaphore.release(),
          check: () => assert.equal(semaphore.tryAcquire(), true, 'the aborted wait took no permit'),
        };
      },
      'futex.waitAsync': () => {
        const word = new Int32Array(new SharedArrayBuffer(4));
        return {
          start: (signal) => futex.waitAsync(word, 0, 0, { signal }),
          queued: () => native.queuedCount(word, 0),
          release: () => futex.notify(word, 0, 1),
          check: () => {},
        };
      },
    };
    for (const [name, make] of Object.entries(WAITS)) {
      it(`${name}: rejects with the reason and leaves nothing queued`, async () => {
        const wait = make();
        const controller = new AbortController();
        const reason = new Error('aborted by the wait:start subscriber');
        const onStart = () => controller.abort(reason);
        dc.subscribe('parklock:wait:start', onStart);
        let pending;
        try {
          pending = wait.start(controller.signal);
        } finally {
          dc.unsubscribe('parklock:wait:start', onStart);
        }
        try {
          assert.equal(wait.queued(), 0, 'the aborted wait is not left queued in the addon');
          assert.equal(pendingCount(), 0, 'no wait of this thread is left pending');
        } finally {
          wait.release();
        }
        await assert.rejects(withinLimit(pending, `${name} aborted at its start`), (error) => error === reason);
        wait.check();
      });
    }
  });
});
