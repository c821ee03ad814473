'use strict';
// The two-state AsyncLock from the V8 blog post introducing Atomics.waitAsync
// (https://v8.dev/features/atomics), rewritten here from its description. It is the example most
// people start from when they need one lock usable both by blocking workers and by async code.
//
// States of the word: 0 unlocked, 1 locked. There is no "waiters" state, so every unlock must
// call Atomics.notify even when nobody waits: that is this design's cost next to Drepper's.
//
// Known limitation, kept on purpose because it is what users of this pattern hit: a pending
// Atomics.waitAsync does not keep a Node.js event loop alive. A worker whose only pending work is
// awaiting the lock can therefore exit before it gets it (see selfcheck.js).

const UNLOCKED = 0;
const LOCKED = 1;

class V8BlogAsyncLock {
  static BYTES = 4;
  static ALIGN = 4;

  // The blog's version always uses index 0 of the buffer; byteOffset generalizes that so that
  // several locks (and other data) can share one SharedArrayBuffer.
  constructor(sab, byteOffset = 0) {
    if (!(sab instanceof SharedArrayBuffer)) {
      throw new TypeError('V8BlogAsyncLock needs a SharedArrayBuffer');
    }
    if (byteOffset % V8BlogAsyncLock.ALIGN !== 0) {
      throw new RangeError('V8BlogAsyncLock byteOffset must be a multiple of 4');
    }
    this.word = new Int32Array(sab, byteOffset, 1);
  }

  tryLock() {
    return Atomics.compareExchange(this.word, 0, UNLOCKED, LOCKED) === UNLOCKED;
  }

  // Blocking form, for workers (or a main thread that accepts freezing its event loop).
  lock() {
    while (!this.tryLock()) {
      // Sleeps only while the word still reads LOCKED.
      Atomics.wait(this.word, 0, LOCKED);
    }
  }

  unlock() {
    if (Atomics.compareExchange(this.word, 0, LOCKED, UNLOCKED) !== LOCKED) {
      throw new Error('V8BlogAsyncLock: unlock() of a lock that is not held');
    }
    // Unconditional: the two-state word cannot tell whether anyone sleeps.
    Atomics.notify(this.word, 0, 1);
  }

  // Non-blocking form: resolves once this caller holds the lock; the caller must unlock().
  async lockAsync() {
    while (!this.tryLock()) {
      const result = Atomics.waitAsync(this.word, 0, LOCKED);
      // result.async is false when the word already changed ('not-equal'): retry at once.
      // Otherwise result.value is a promise that settles on notify.
      if (result.async) await result.value;
    }
  }

  // The blog's executeLocked(f): take the lock without blocking, run f, unlock. Unlike the
  // blog's version it returns a promise of f's result and unlocks even when f throws, so a
  // benchmark can await it; f may itself return a promise (an async critical section).
  async executeLocked(f) {
    await this.lockAsync();
    try {
      return await f();
    } finally {
      this.unlock();
    }
  }
}

module.exports = { V8BlogAsyncLock };
