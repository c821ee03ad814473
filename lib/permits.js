'use strict';
// What Semaphore#acquirePermits() and friends return: gives its permits back once, by release()
// or by `using` ([Symbol.dispose]), like ./guard.js's Guard does for locks.

const { defineDisposal } = require('./guard');

class Permits {
  #semaphore;
  #count;

  // `count` permits of `semaphore`, which this thread has acquired.
  constructor(semaphore, count) {
    this.#semaphore = semaphore;
    this.#count = count;
  }

  // Releases the permits (exactly `permits` of them); later calls do nothing, so an explicit
  // release() inside a `using` block is safe.
  release() {
    const semaphore = this.#semaphore;
    if (semaphore === undefined) return;
    this.#semaphore = undefined;
    semaphore.release(this.#count);
  }

  // How many permits this guard holds (or held).
  get permits() {
    return this.#count;
  }

  get released() {
    return this.#semaphore === undefined;
  }
}

defineDisposal(Permits, 'release');

module.exports = { Permits };
