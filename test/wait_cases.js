'use strict';
// Every Promise-returning method of parklock, each set up on one thread so that a call waits:
// the tests of what those methods share (signals.test.js, promise_forms.test.js) run over all of
// them. A case's setup() returns
//   wait(options)  calls the method; it must wait (nothing is available yet)
//   queued()       waiters parked on the primitive's words, in any thread
//   release()      makes what the wait waits for available (unlocks, releases, notifies, ...);
//                  await what it returns
//   finish(value)  gives back what a wait that succeeded with `value` took
//   assertUntaken()  after release(), when no wait succeeded: nothing was taken by anybody
const assert = require('node:assert/strict');
const { Mutex, RWLock, Semaphore, Condition, Latch, Once, Barrier, futex, layouts } = require('../lib');
const native = require('../lib/native');

// Waiters parked on any word of a primitive.
function queuedOn(primitive, words) {
  const array = new Int32Array(primitive.buffer, primitive.byteOffset, words);
  let count = 0;
  for (let i = 0; i < words; i++) count += native.queuedCount(array, i);
  return count;
}

const WAIT_CASES = [
  {
    name: 'Mutex#lockAsync',
    setup() {
      const m = new Mutex();
      const holder = m.lock();
      return {
        wait: (options) => m.lockAsync(options),
        queued: () => queuedOn(m, layouts.mutex.WORDS),
        release: () => holder.unlock(),
        finish: (guard) => guard.unlock(),
        assertUntaken: () => assert.equal(m.isLocked, false, 'the mutex is free'),
      };
    },
  },
  {
    name: 'Mutex#executeLocked',
    setup() {
      const m = new Mutex();
      const holder = m.lock();
      return {
        wait: (options) => m.executeLocked(() => 'ran', options),
        queued: () => queuedOn(m, layouts.mutex.WORDS),
        release: () => holder.unlock(),
        finish: () => {},
        assertUntaken: () => assert.equal(m.isLocked, false, 'the mutex is free'),
      };
    },
  },
  {
    name: 'RWLock#lockAsync',
    setup() {
      const rw = new RWLock();
      const holder = rw.lock();
      return {
        wait: (options) => rw.lockAsync(options),
        queued: () => queuedOn(rw, layouts.rwlock.WORDS),
        release: () => holder.unlock(),
        finish: (guard) => guard.unlock(),
        assertUntaken: () => assert.equal(rw.isLocked, false, 'the rwlock is free'),
      };
    },
  },
  {
    name: 'RWLock#lockSharedAsync',
    setup() {
      const rw = new RWLock();
      const holder = rw.lock();
      return {
        wait: (options) => rw.lockSharedAsync(options),
        queued: () => queuedOn(rw, layouts.rwlock.WORDS),
        release: () => holder.unlock(),
        finish: (guard) => guard.unlock(),
        assertUntaken: () => assert.equal(rw.isLocked, false, 'the rwlock is free'),
      };
    },
  },
  {
    name: 'RWLock#lockUpgradableAsync',
    setup() {
      const rw = new RWLock();
      const holder = rw.lockUpgradable();
      return {
        wait: (options) => rw.lockUpgradableAsync(options),
        queued: () => queuedOn(rw, layouts.rwlock.WORDS),
        release: () => holder.unlock(),
        finish: (guard) => guard.unlock(),
        assertUntaken: () => assert.equal(rw.isLocked, false, 'the rwlock is free'),
      };
    },
  },
  {
    // Waits for the plain read hold beside this thread's upgradable one; what it takes is the
    // write lock, and what it leaves untaken is the upgradable read lock, not upgraded.
    name: 'RWLock#upgradeAsync',
    setup() {
      const rw = new RWLock();
      rw.lockUpgradable();
      const reader = rw.lockShared();
      return {
        wait: (options) => rw.upgradeAsync(options),
        queued: () => queuedOn(rw, layouts.rwlock.WORDS),
        release: () => reader.unlock(),
        finish: () => rw.unlock(),
        assertUntaken: () => {
          assert.equal(rw.isWriteLocked, false, 'not upgraded');
          assert.equal(rw.isUpgradableLockedByCurrentThread, true, 'the upgradable hold stays');
          assert.equal(rw.readers, 1);
          rw.unlockUpgradable();
        },
      };
    },
  },
  {
    name: 'Semaphore#acquireAsync',
    setup() {
      const s = new Semaphore(0);
      return {
        wait: (options) => s.acquireAsync(1, options),
        queued: () => queuedOn(s, layouts.semaphore.WORDS),
        release: () => s.release(1),
        finish: () => s.release(1),
        assertUntaken: () => assert.equal(s.available, 1, 'the released permit is still available'),
      };
    },
  },
  {
    name: 'Condition#waitAsync',
    setup() {
      const m = new Mutex();
      const c = new Condition();
      m.lock();
      let woken;
      return {
        wait: (options) => c.waitAsync(m, options),
        queued: () => queuedOn(c, layouts.condition.WORDS) + queuedOn(m, layouts.mutex.WORDS),
        release: () => {
          woken = c.notifyOne();
        },
        finish: () => m.unlock(),
        assertUntaken: () => {
          assert.equal(woken, 0, 'nobody was waiting to be notified');
          assert.equal(m.isHeldByCurrentThread, true, 'the mutex was never released');
          m.unlock();
        },
      };
    },
  },
  {
    name: 'Latch#waitAsync',
    setup() {
      const latch = new Latch(1);
      return {
        wait: (options) => latch.waitAsync(options),
        queued: () => queuedOn(latch, layouts.latch.WORDS),
        release: () => latch.countDown(),
        finish: () => {},
        assertUntaken: () => assert.equal(latch.count, 0),
      };
    },
  },
  {
    name: 'Once#runAsync',
    setup() {
      const once = new Once();
      let complete;
      const running = once.runAsync(() => new Promise((resolve) => (complete = resolve)));
      let calls = 0;
      return {
        wait: (options) => once.runAsync(() => calls++, options),
        queued: () => queuedOn(once, layouts.once.WORDS),
        release: () => {
          complete();
          return running;
        },
        finish: () => {},
        assertUntaken: () => {
          assert.equal(once.done, true, 'the run that held it completed');
          assert.equal(calls, 0, 'no waiting call ran its initializer');
        },
      };
    },
  },
  {
    name: 'Barrier#waitAsync',
    setup() {
      const barrier = new Barrier(2);
      const state = () => {
        const words = new Int32Array(barrier.buffer, barrier.byteOffset, layouts.barrier.WORDS);
        return Atomics.load(words, layouts.barrier.STATE_INDEX);
      };
      return {
        wait: (options) => barrier.waitAsync(options),
        queued: () => queuedOn(barrier, layouts.barrier.WORDS),
        // The other party: it must not complete a generation with a withdrawn arrival.
        release: () => barrier.waitAsync({ timeout: 0 }).catch(() => {}),
        finish: () => {},
        assertUntaken: () => {
          assert.equal(state() & layouts.barrier.ARRIVED_MASK, 0, 'every arrival was withdrawn');
          assert.equal(state() >>> layouts.barrier.GENERATION_SHIFT, 0, 'no generation completed');
        },
      };
    },
  },
  {
    name: 'Mutex#waitForUnlock',
    setup() {
      const m = new Mutex();
      const holder = m.lock();
      return {
        wait: (options) => m.waitForUnlock(options),
        queued: () => queuedOn(m, layouts.mutex.WORDS),
        release: () => holder.unlock(),
        finish: () => {},
        assertUntaken: () => assert.equal(m.isLocked, false, 'the mutex is free'),
      };
    },
  },
  {
    name: 'RWLock#waitForUnlock',
    setup() {
      const rw = new RWLock();
      const holder = rw.lockShared();
      return {
        wait: (options) => rw.waitForUnlock(options),
        queued: () => queuedOn(rw, layouts.rwlock.WORDS),
        release: () => holder.unlock(),
        finish: () => {},
        assertUntaken: () => assert.equal(rw.isLocked, false, 'the rwlock is free'),
      };
    },
  },
  {
    name: 'RWLock#executeLocked',
    setup() {
      const rw = new RWLock();
      const holder = rw.lock();
      return {
        wait: (options) => rw.executeLocked(() => 'ran', options),
        queued: () => queuedOn(rw, layouts.rwlock.WORDS),
        release: () => holder.unlock(),
        finish: () => {},
        assertUntaken: () => assert.equal(rw.isLocked, false, 'the rwlock is free'),
      };
    },
  },
  {
    name: 'RWLock#executeShared',
    setup() {
      const rw = new RWLock();
      const holder = rw.lock();
      return {
        wait: (options) => rw.executeShared(() => 'ran', options),
        queued: () => queuedOn(rw, layouts.rwlock.WORDS),
        release: () => holder.unlock(),
        finish: () => {},
        assertUntaken: () => assert.equal(rw.isLocked, false, 'the rwlock is free'),
      };
    },
  },
  {
    name: 'Semaphore#executeLocked',
    setup() {
      const s = new Semaphore(0);
      return {
        wait: (options) => s.executeLocked(() => 'ran', 1, options),
        queued: () => queuedOn(s, layouts.semaphore.WORDS),
        release: () => s.release(1),
        finish: () => {},
        assertUntaken: () => assert.equal(s.available, 1, 'the released permit is still available'),
      };
    },
  },
  {
    name: 'Semaphore#acquirePermitsAsync',
    setup() {
      const s = new Semaphore(0);
      return {
        wait: (options) => s.acquirePermitsAsync(1, options),
        queued: () => queuedOn(s, layouts.semaphore.WORDS),
        release: () => s.release(1),
        finish: (permits) => permits.release(),
        assertUntaken: () => assert.equal(s.available, 1, 'the released permit is still available'),
      };
    },
  },
  {
    name: 'futex.waitAsync',
    setup() {
      const array = new Int32Array(new SharedArrayBuffer(4));
      let woken;
      return {
        wait: (options) => futex.waitAsync(array, 0, 0, options),
        queued: () => native.queuedCount(array, 0),
        release: () => {
          woken = futex.notify(array, 0);
        },
        finish: () => {},
        assertUntaken: () => assert.equal(woken, 0, 'nobody was waiting to be notified'),
      };
    },
  },
];

module.exports = { WAIT_CASES, queuedOn };
