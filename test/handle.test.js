'use strict';
// The addon's handles and wait records: every contended entry takes a handle made once per
// primitive instance, and anything else (a bare Int32Array, another primitive's handle with too
// few words, a wait record, hostile objects) is refused with a coded TypeError, never a crash.
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const native = require('../lib/native');
const { Mutex } = require('../lib');
const { exitIfKeptAlive } = require('./helpers');

exitIfKeptAlive();

const TYPE_ERROR = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' };

function notHandles() {
  const { proxy: revoked, revoke } = Proxy.revocable({}, {});
  revoke();
  return [
    undefined, null, 0, 1.5, 'handle', Symbol('handle'), 10n, {}, [], () => {}, revoked,
    new Int32Array(new SharedArrayBuffer(8)), new SharedArrayBuffer(8),
    Object.create(null), new Proxy({}, {}),
  ];
}

const oneWordHandle = () => native.handle(new Int32Array(new SharedArrayBuffer(4)), 1);

// Each entry called with `handle` in every handle position and harmless other arguments.
const ENTRIES = {
  mutexLockSlow: (h) => native.mutexLockSlow(h, 0),
  mutexUnlockSlow: (h) => native.mutexUnlockSlow(h),
  mutexLockAsync: (h) => native.mutexLockAsync(h, {}),
  mutexTakeOver: (h) => native.mutexTakeOver(h),
  semaphoreAcquireSlow: (h) => native.semaphoreAcquireSlow(h, 1, 0),
  semaphoreReleaseSlow: (h) => native.semaphoreReleaseSlow(h, 1),
  semaphoreAcquireAsync: (h) => native.semaphoreAcquireAsync(h, 1, {}),
  rwlockLockSlow: (h) => native.rwlockLockSlow(h, 0),
  rwlockLockSharedSlow: (h) => native.rwlockLockSharedSlow(h, 0),
  rwlockReleaseWriteSlow: (h) => native.rwlockReleaseWriteSlow(h),
  rwlockUnlockSharedSlow: (h) => native.rwlockUnlockSharedSlow(h),
  rwlockLockAsync: (h) => native.rwlockLockAsync(h, {}),
  rwlockLockSharedAsync: (h) => native.rwlockLockSharedAsync(h, {}),
  rwlockTakeOver: (h) => native.rwlockTakeOver(h, true),
  conditionWaitAsCondition: (h) => native.conditionWait(h, oneWordHandle(), 0),
  conditionWaitAsMutex: (h) => native.conditionWait(oneWordHandle(), h, 0),
  conditionWaitAsync: (h) => native.conditionWaitAsync(h, h, {}),
  conditionNotifyOne: (h) => native.conditionNotifyOne(h),
  conditionNotifyAll: (h) => native.conditionNotifyAll(h),
  latchCountDown: (h) => native.latchCountDown(h, 1),
  latchWait: (h) => native.latchWait(h, 0),
  latchWaitAsync: (h) => native.latchWaitAsync(h, {}),
  onceBeginSlow: (h) => native.onceBeginSlow(h, 0),
  onceBeginAsync: (h) => native.onceBeginAsync(h, {}),
  onceFinishSlow: (h) => native.onceFinishSlow(h, true),
  barrierWait: (h) => native.barrierWait(h, 0),
  barrierWaitAsync: (h) => native.barrierWaitAsync(h, {}),
};

describe('handles', () => {
  it('every contended entry refuses what is not a handle', () => {
    for (const [name, call] of Object.entries(ENTRIES)) {
      for (const value of notHandles()) {
        assert.throws(() => call(value), TYPE_ERROR, `${name}(${String(typeof value)})`);
      }
    }
  });

  it('a handle with fewer words than the primitive has is refused', () => {
    const oneWord = native.handle(new Int32Array(new SharedArrayBuffer(8)), 1);
    for (const name of Object.keys(ENTRIES).filter((key) => key.startsWith('rwlock'))) {
      assert.throws(() => ENTRIES[name](oneWord), TYPE_ERROR, name);
    }
    assert.throws(() => native.barrierWait(oneWord, 0), TYPE_ERROR);
    assert.throws(() => native.barrierWaitAsync(oneWord, {}), TYPE_ERROR);
  });

  it('handle() itself checks its memory and word count', () => {
    const words = new Int32Array(new SharedArrayBuffer(8));
    assert.throws(() => native.handle(new Int32Array(2), 1), TYPE_ERROR);
    assert.throws(() => native.handle(new Uint32Array(new SharedArrayBuffer(8)), 1), TYPE_ERROR);
    assert.throws(() => native.handle(words, 3), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => native.handle(words, 0), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => native.handle(words, '1'), TYPE_ERROR);
    assert.equal(typeof native.handle(words, 2), 'object');
  });

  it('an uncontended primitive never makes a handle', () => {
    // The thread's first Mutex primes the contended paths on a private mutex of its own, which
    // does make a handle (lib/prime.js): that one comes first, outside the count.
    new Mutex();
    const original = native.handle;
    let made = 0;
    native.handle = (...args) => {
      made += 1;
      return original(...args);
    };
    try {
      const m = new Mutex();
      m.lock();
      m.unlock();
      assert.equal(m.tryLock(), true);
      m.unlock();
      assert.equal(made, 0);
    } finally {
      native.handle = original;
    }
  });
});

describe('wait handles', () => {
  it('cancel() refuses what is not a number and finds nothing for a made-up or ended wait', () => {
    for (const value of notHandles().filter((v) => typeof v !== 'number')) {
      assert.throws(() => native.cancel(value), TYPE_ERROR);
    }
    for (const value of [0, -0, 1, -1, 1.5, -(2 ** 32), -(2 ** 53), -(2 ** 60), NaN, -Infinity, Infinity]) {
      assert.equal(native.cancel(value), undefined, String(value));
    }
    const m = new Mutex();
    const guard = m.lock();
    const handle = native.handle(new Int32Array(m.buffer, m.byteOffset, 1), 1);
    let settled;
    const record = { settle: (outcome) => { settled = outcome; } };
    const wait = native.mutexLockAsync(handle, record);
    assert.ok(wait < 0, 'a queued wait gets a handle');
    assert.equal(native.cancel(wait - 1), undefined, 'a handle of no wait');
    assert.equal(native.cancel(wait), native.settled.CANCELLED);
    assert.equal(native.cancel(wait), undefined, 'already ended');
    const next = native.mutexLockAsync(handle, record);
    assert.notEqual(next, wait, 'a reused slot has a new handle');
    assert.equal(native.cancel(wait), undefined, 'the old handle does not reach the new wait');
    assert.equal(native.cancel(next), native.settled.CANCELLED);
    assert.equal(settled, undefined, 'a cancelled wait is not settled again through onSettle');
    guard.unlock();
    assert.equal(m.isLocked, false);
  });
});
