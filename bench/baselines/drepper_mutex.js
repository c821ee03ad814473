'use strict';
// Ulrich Drepper's three-state futex mutex ("Futexes Are Tricky"), translated to JavaScript the
// way it usually is: an Int32Array word on a SharedArrayBuffer, Atomics.wait/notify in place of
// futex_wait/futex_wake. This is the baseline a user would write by hand instead of parklock.
//
// Note on the paper's numbering: the loop below (exchange(2), wait while 2) is the paper's
// refined three-state mutex; the first three-state version retries with compareExchange(0, 2)
// instead. Both share the states and the unlock; the exchange loop is the one usually ported.
//
// States of the word:
//   0  unlocked
//   1  locked, nobody waiting        -> unlock needs no notify (the cheap case)
//   2  locked, waiters may be asleep -> unlock must notify one
//
// Sync only: lock() blocks the calling thread with Atomics.wait. Node allows that on the main
// thread too (browsers do not), but it freezes the event loop while it waits.
//
// No owner is recorded: unlocking a mutex this thread does not hold corrupts it silently, and a
// thread that locks twice deadlocks. Those are properties of the algorithm, kept on purpose.

const UNLOCKED = 0;
const LOCKED = 1;
const LOCKED_WITH_WAITERS = 2;

class DrepperMutex {
  // Bytes of shared memory one mutex needs, and their alignment.
  static BYTES = 4;
  static ALIGN = 4;

  // Every thread that shares the mutex constructs its own DrepperMutex over the same
  // (sab, byteOffset); the word starts as 0 (unlocked) in a fresh SharedArrayBuffer.
  constructor(sab, byteOffset = 0) {
    if (!(sab instanceof SharedArrayBuffer)) {
      throw new TypeError('DrepperMutex needs a SharedArrayBuffer');
    }
    if (byteOffset % DrepperMutex.ALIGN !== 0) {
      throw new RangeError('DrepperMutex byteOffset must be a multiple of 4');
    }
    this.word = new Int32Array(sab, byteOffset, 1);
  }

  lock() {
    const word = this.word;
    // Fast path: 0 -> 1, no waiter to announce.
    let seen = Atomics.compareExchange(word, 0, UNLOCKED, LOCKED);
    if (seen === UNLOCKED) return;
    // Contended: mark the word 2 ("someone may sleep") before sleeping, so that the holder's
    // unlock knows to wake us. exchange() both marks it and tells us whether it was free
    // meanwhile (0), in which case we now own it, still marked 2: at worst one spurious notify.
    if (seen !== LOCKED_WITH_WAITERS) seen = Atomics.exchange(word, 0, LOCKED_WITH_WAITERS);
    while (seen !== UNLOCKED) {
      // Sleeps only while the word still reads 2; returns at once if it changed meanwhile.
      Atomics.wait(word, 0, LOCKED_WITH_WAITERS);
      seen = Atomics.exchange(word, 0, LOCKED_WITH_WAITERS);
    }
  }

  unlock() {
    const word = this.word;
    // sub() returns the old value: 1 means nobody announced itself, and the word is now 0.
    if (Atomics.sub(word, 0, 1) !== LOCKED) {
      // It was 2: finish the release and wake one sleeper, which re-marks the word 2 itself.
      Atomics.store(word, 0, UNLOCKED);
      Atomics.notify(word, 0, 1);
    }
  }
}

module.exports = { DrepperMutex };
