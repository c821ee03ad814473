'use strict';
// The reader-writer lock a user would write by hand with Atomics: writer-preferring, so that a
// stream of readers cannot starve a writer. The baseline parklock's RWLock is measured against.
//
//   word 0  the state: -1 while a writer holds the lock, else the number of readers inside
//   word 1  the writers that wait for the lock or hold it; a reader does not enter while it is
//           not 0, so a writer waits only for the readers already inside
//
// Every wait is Atomics.wait on the word that changes; releases notify whoever may be waiting.

const STATE = 0;
const WRITERS = 1;

class JsRwLock {
  static BYTES = 8;

  constructor(sab, byteOffset = 0) {
    if (!(sab instanceof SharedArrayBuffer)) throw new TypeError('JsRwLock needs a SharedArrayBuffer');
    this.words = new Int32Array(sab, byteOffset, 2);
  }

  lock() {
    const words = this.words;
    Atomics.add(words, WRITERS, 1);
    for (;;) {
      const state = Atomics.load(words, STATE);
      if (state === 0) {
        if (Atomics.compareExchange(words, STATE, 0, -1) === 0) return;
        // A reader that had passed the WRITERS check got in first. Sleeping on 0 here would never
        // wake once it left: no reader enters after it to change the word again.
        continue;
      }
      Atomics.wait(words, STATE, state);
    }
  }

  unlock() {
    const words = this.words;
    Atomics.store(words, STATE, 0);
    // The readers held back by this writer may go on once no writer is left.
    if (Atomics.sub(words, WRITERS, 1) === 1) Atomics.notify(words, WRITERS);
    Atomics.notify(words, STATE);
  }

  lockShared() {
    const words = this.words;
    for (;;) {
      const writers = Atomics.load(words, WRITERS);
      if (writers !== 0) {
        Atomics.wait(words, WRITERS, writers);
        continue;
      }
      const state = Atomics.load(words, STATE);
      if (state < 0) {
        Atomics.wait(words, STATE, state);
      } else if (Atomics.compareExchange(words, STATE, state, state + 1) === state) {
        return;
      }
    }
  }

  unlockShared() {
    if (Atomics.sub(this.words, STATE, 1) === 1) Atomics.notify(this.words, STATE);
  }
}

module.exports = { JsRwLock };
