'use strict';
// What lock() and friends return: releases once, by unlock() or by `using` ([Symbol.dispose]).

const { rejectingMethods } = require('./promise_form');

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

  [dispose]() {
    this.unlock();
  }

  [asyncDispose]() {
    this.unlock();
    return Promise.resolve();
  }
}

rejectingMethods(Guard.prototype, asyncDispose);

// Waits for `acquiring` (a Promise of anything with a `release()` or `unlock()`), runs fn (sync or
// async) holding it, and always gives it back; returns fn's result. What executeLocked() and
// executeShared() of every primitive are.
async function runHolding(acquiring, fn) {
  const held = await acquiring;
  try {
    return await fn();
  } finally {
    if (typeof held.release === 'function') held.release();
    else held.unlock();
  }
}

module.exports = { Guard, runHolding };
