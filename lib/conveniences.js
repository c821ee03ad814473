'use strict';
// Conveniences built only on the primitives' public methods, installed on their prototypes when
// the package loads (lib/index.js requires this file): Mutex#waitForUnlock, Semaphore permit
// guards and Semaphore#executeLocked, RWLock#executeLocked / #executeShared, and on every
// primitive with Promise waits, cancelPendingWaits() (./cancel_waits.js).
const { Mutex, isMutex } = require('./mutex');
const { Semaphore } = require('./semaphore');
const { RWLock } = require('./rwlock');
const { Condition } = require('./condition');
const { Latch } = require('./latch');
const { Barrier } = require('./barrier');
const { Permits } = require('./permits');
const { Guard } = require('./guard');
const { cancellable, cancelPendingWaits: cancelWaits } = require('./cancel_waits');
const { validateAsyncOptions, validateFunction, validateInteger } = require('./validate');
const { invalidArgType } = require('./errors');
const { rejectingMethods } = require('./promise_form');
const { isAborted, reasonOf } = require('./signals');

const releaseGuard = (guard) => {
  guard.unlock();
};

// --- Mutex ---

// Resolves once the mutex is unlocked (now, or at some instant after the call), without keeping
// it. Unlocked now: resolves at once. Otherwise it takes its turn in the mutex's FIFO queue like
// lockAsync() (same options, same rejections) and unlocks as soon as it is handed the lock. An
// OwnerDiedError rejects it like lockAsync(): its guard holds the mutex for the caller to repair.
// A thread that holds the mutex waits, as lockAsync() does: another async task of the same thread
// may be the one about to unlock it.
function waitForUnlock(options) {
  if (!isMutex(this)) throw invalidArgType('this', 'an instance of Mutex', this);
  if (!this.isLocked) {
    const { signal } = validateAsyncOptions(options);
    if (isAborted(signal)) return Promise.reject(reasonOf(signal));
    return Promise.resolve();
  }
  return this.lockAsync(options).then(releaseGuard);
}

// --- Semaphore ---

// acquire(n), returning a guard that releases the n permits once.
function acquirePermits(n = 1) {
  this.acquire(n);
  return new Permits(this, n);
}

// tryAcquire(n, timeoutMs), returning a guard if the permits were taken, null otherwise.
function tryAcquirePermits(n = 1, timeoutMs = 0) {
  return this.tryAcquire(n, timeoutMs) ? new Permits(this, n) : null;
}

// acquireAsync(n, options), resolving to a guard that releases the n permits once.
function acquirePermitsAsync(n = 1, options) {
  return this.acquireAsync(n, options).then(() => new Permits(this, n));
}

// Acquires n permits asynchronously, runs fn (sync or async) and always releases them; returns
// fn's result.
async function executeLockedPermits(fn, n = 1, options) {
  validateFunction(fn, 'fn');
  await this.acquireAsync(n, options);
  try {
    return await fn();
  } finally {
    this.release(n);
  }
}

// --- RWLock ---

// As Mutex#executeLocked, with the write lock: if the previous writer ended holding the lock, fn
// does not run and the Promise rejects with the OwnerDiedError, whose guard holds the lock.
async function executeLocked(fn, options) {
  validateFunction(fn, 'fn');
  const guard = await this.lockAsync(options);
  try {
    return await fn();
  } finally {
    guard.unlock();
  }
}

// The same with a read lock.
async function executeShared(fn, options) {
  validateFunction(fn, 'fn');
  const guard = await this.lockSharedAsync(options);
  try {
    return await fn();
  } finally {
    guard.unlock();
  }
}

// --- Every primitive with Promise waits ---

// Rejects every Promise wait that this thread started through this object and that is still
// pending, with `reason` (default: an Error with code ERR_PARKLOCK_CANCELLED); returns how many.
function cancelPendingWaits(reason) {
  return cancelWaits(this, reason);
}

// Defines methods as a class body would: writable, configurable, not enumerable.
function define(prototype, methods) {
  for (const [name, value] of Object.entries(methods)) {
    Object.defineProperty(value, 'name', { value: name });
    Object.defineProperty(prototype, name, { value, writable: true, enumerable: false, configurable: true });
  }
}

define(Mutex.prototype, { waitForUnlock, cancelPendingWaits });
rejectingMethods(Mutex.prototype, 'waitForUnlock');

define(Semaphore.prototype, {
  acquirePermits,
  tryAcquirePermits,
  acquirePermitsAsync,
  executeLocked: executeLockedPermits,
  cancelPendingWaits,
});
rejectingMethods(Semaphore.prototype, 'acquirePermitsAsync');

define(RWLock.prototype, { executeLocked, executeShared, cancelPendingWaits });
for (const Class of [Condition, Latch, Barrier]) define(Class.prototype, { cancelPendingWaits });

// Every Promise form, cancellable. tryNow is each method's own uncontended fast path, through the
// public try form that does the same compare-and-swap (./cancel_waits.js).
class ReadHold {
  #rwlock;

  constructor(rwlock) {
    this.#rwlock = rwlock;
  }

  unlock() {
    this.#rwlock.unlockShared();
  }
}

// A taken lock goes straight to the method (skipping the try form's check for an ended owner,
// which the method makes itself while it waits).
cancellable(Mutex.prototype, 'lockAsync', 0, {
  tryNow: (mutex) =>
    !mutex.isLocked && mutex.tryLock() ? Promise.resolve(new Guard(mutex)) : undefined,
});
cancellable(RWLock.prototype, 'lockAsync', 0, {
  tryNow: (rwlock) =>
    !rwlock.isLocked && rwlock.tryLock() ? Promise.resolve(new Guard(rwlock)) : undefined,
});
cancellable(RWLock.prototype, 'lockSharedAsync', 0, {
  tryNow: (rwlock) =>
    !rwlock.isWriteLocked && rwlock.tryLockShared()
      ? Promise.resolve(new Guard(new ReadHold(rwlock)))
      : undefined,
});
const { MAX_PERMITS } = Semaphore;
cancellable(Semaphore.prototype, 'acquireAsync', 1, {
  check: (n = 1) => validateInteger(n, 'n', 1, MAX_PERMITS),
  tryNow: (semaphore, n = 1) => (semaphore.tryAcquire(n) ? Promise.resolve() : undefined),
});
cancellable(Condition.prototype, 'waitAsync', 1);
cancellable(Latch.prototype, 'waitAsync', 0, {
  multiStep: true,
  tryNow: (latch) => (latch.tryWait() ? Promise.resolve(true) : undefined),
});
// A barrier wait always arrives first: it has no fast path to run before the method.
cancellable(Barrier.prototype, 'waitAsync', 0, { multiStep: true, tryNow: () => undefined });
