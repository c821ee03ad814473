'use strict';
// The counting semaphore a user would write by hand: the number of permits in one Int32 word and
// the number of sleepers in a second, Atomics.wait/notify for sleeping. The baseline parklock's
// Semaphore is measured against.
//
//   word 0  permits available (>= 0)
//   word 1  threads that announced they may sleep (release() notifies only if any)
//
// Unfair by construction: a release wakes one sleeper, but any thread that arrives meanwhile may
// take the permit first, and the woken one sleeps again.

class JsSemaphore {
  static BYTES = 8;

  constructor(sab, byteOffset = 0) {
    if (!(sab instanceof SharedArrayBuffer)) throw new TypeError('JsSemaphore needs a SharedArrayBuffer');
    this.words = new Int32Array(sab, byteOffset, 2);
  }

  static init(sab, byteOffset, permits) {
    const semaphore = new JsSemaphore(sab, byteOffset);
    Atomics.store(semaphore.words, 0, permits);
    return semaphore;
  }

  acquire() {
    const words = this.words;
    for (;;) {
      const seen = Atomics.load(words, 0);
      if (seen > 0) {
        if (Atomics.compareExchange(words, 0, seen, seen - 1) === seen) return;
        continue;
      }
      // Announce first, then sleep only while the word still reads 0: a release that comes in
      // between changes the word, so the wait returns at once instead of missing it.
      Atomics.add(words, 1, 1);
      Atomics.wait(words, 0, 0);
      Atomics.sub(words, 1, 1);
    }
  }

  release() {
    const words = this.words;
    Atomics.add(words, 0, 1);
    if (Atomics.load(words, 1) > 0) Atomics.notify(words, 0, 1);
  }
}

module.exports = { JsSemaphore };
