'use strict';
// What lock() and friends return: releases once, by unlock() or by `using` ([Symbol.dispose]);
// and the conveniences built on a lock's Promise form.
const { rejectingMethods } = require('./promise_form');
const { validateAsyncOptions, validateFunction } = require('./validate');
const { isAborted, reasonOf } = require('./signals');
const { invalidArgType } = require('./errors');
const { runLocked, runTaken } = require('./run_locked');

const dispose = Symbol.dispose || Symbol.for('nodejs.dispose');
const asyncDispose = Symbol.asyncDispose || Symbol.for('nodejs.asyncDispose');

class Guard {
  #held;

  // `held` is what to release: anything with an unlock() method.
  constructor(held) {
    this.#held = held;
  }

  // Releases what this guard holds; later calls do nothing, so an explicit unlock() inside a
  // `using` block is safe.
  unlock() {
    const held = this.#held;
    if (held === undefined) return;
    this.#held = undefined;
    held.unlock();
  }

  get released() {
    return this.#held === undefined;
  }
}

// Gives a guard class [Symbol.dispose]() and [Symbol.asyncDispose](), which call its method
// `release` (the one that gives the hold back once).
function defineDisposal(Class, release) {
  const methods = {
    [dispose]() {
      this[release]();
    },
    [asyncDispose]() {
      this[release]();
      return Promise.resolve();
    },
  };
  for (const key of [dispose, asyncDispose]) {
    Object.defineProperty(Class.prototype, key, { value: methods[key], writable: true, configurable: true });
  }
  rejectingMethods(Class.prototype, asyncDispose);
}

defineDisposal(Guard, 'unlock');

// Waits for `acquiring` (a Promise of anything with a `release()` or `unlock()`), runs fn (sync or
// async) holding it, and always gives it back; returns fn's result. What a Semaphore's
// executeLocked() is: its permits have no owner that could end holding them (a lock's is
// ./run_locked.js).
async function runHolding(acquiring, fn) {
  const held = await acquiring;
  try {
    return await fn();
  } finally {
    if (typeof held.release === 'function') held.release();
    else held.unlock();
  }
}

const releaseGuard = (guard) => {
  guard.unlock();
};

// executeLocked() and waitForUnlock() of a lock class (Mutex, RWLock) whose lockAsync() resolves
// to a guard and whose isLocked says whether anybody holds it. `name` and `isInstance` (a brand
// check) are the class's; `takeNow(lock)` takes a free lock as lockAsync()'s fast path does and
// says whether it did, and its unlock() releases what that took.
function lockConveniences(name, isInstance, takeNow) {
  const method = `${name}.executeLocked()`;
  // Everything but the lock taken at once: arguments to check (their errors reject), options to
  // honour, a wait, an ended owner to report.
  async function executeQueued(lock, fn, options) {
    validateFunction(fn, 'fn');
    return runLocked(lock.lockAsync(options), fn, method);
  }
  return {
    // Locks asynchronously, runs fn (sync or async) and always unlocks; returns fn's result. fn
    // receives { ownerDied }: true (with the ended owner's threadId and pid, and a process
    // warning) when the previous owner ended holding the lock (./run_locked.js).
    executeLocked(fn, options) {
      if (typeof fn === 'function' && options === undefined && isInstance(this) && takeNow(this)) {
        return runTaken(this, this.unlock, fn);
      }
      return executeQueued(this, fn, options);
    },
    // Resolves once the lock is unlocked (now, or at some instant after the call), without keeping
    // it: otherwise it takes its turn in the queue like lockAsync() (same options, same
    // rejections, an OwnerDiedError included), and unlocks as soon as it is handed the lock. On a
    // thread that holds the lock it waits, as lockAsync() does: another async task may unlock it.
    waitForUnlock(options) {
      if (!isInstance(this)) throw invalidArgType('this', `an instance of ${name}`, this);
      if (!this.isLocked) {
        const { signal } = validateAsyncOptions(options);
        if (isAborted(signal)) return Promise.reject(reasonOf(signal));
        return Promise.resolve();
      }
      return this.lockAsync(options).then(releaseGuard);
    },
  };
}

module.exports = { Guard, defineDisposal, runHolding, lockConveniences };
