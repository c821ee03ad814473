'use strict';
// RWLock: the readers-writer lock of addon/rwlock.h (a state word and an owner word), whose layout
// this file reads from the addon's exported constants. While nobody is parked, every lock and
// unlock is one Atomics.compareExchange on the state word (plus the owner word for writers); the
// addon is entered only to wait, or to hand the lock to parked waiters.
//
// Fairness: once anybody waits, newcomers (readers included) queue behind it, and releases grant
// the lock in FIFO order, so a stream of readers cannot starve a writer. Readers are counted, not
// recorded per thread: upgrading a read hold to a write hold (lock() while this thread reads)
// waits forever and is not detected.
//
// Owner death: a write lock whose holder's thread ended (terminated, exited, crashed, or its code
// returned) is taken over by the next acquirer in either mode, which gets an OwnerDiedError whose
// guard holds the lock in the mode it asked for.
const native = require('./native');
const { handleFor } = require('./handles');
const { traceBlocking } = require('./diagnostics');
const { attach, defineLocation, defineSize } = require('./shared_memory');
const { threadId, waitAsync, cancelPendingWaits } = require('./async_waits');
const { vocabulary, outcome } = require('./outcomes');
const { validateTimeout, validateAsyncOptions, validateFunction } = require('./validate');
const { lockError, corrupt } = require('./errors');
const { Guard, runHolding } = require('./guard');
const { rejectingMethods } = require('./promise_form');
const { isAborted } = require('./signals');

const layout = native.rwlockLayout;
const { STATE_INDEX, OWNER_INDEX, WRITER, PARKED, READER_SHIFT, ONE_READER, MAX_READERS, WORDS } =
  layout;

function readersOf(state) {
  return state >>> READER_SHIFT;
}

// Values no operation writes (see the table in addon/rwlock.h).
function isCorrupt(state) {
  return state < 0 || ((state & WRITER) !== 0 && readersOf(state) !== 0) || state === PARKED;
}

const DEADLOCK = 'This thread holds the write lock; locking the rwlock again would wait forever';
const RWLOCK = vocabulary({ what: 'rwlock', acquired: true, timedOut: false, deadlock: DEADLOCK });

function deadlock() {
  return lockError('ERR_PARKLOCK_DEADLOCK', DEADLOCK);
}

function tooManyReaders() {
  return lockError(
    'ERR_PARKLOCK_TOO_MANY_READERS',
    `The rwlock already has the most read holds it can count (${MAX_READERS})`,
  );
}

class RWLock {
  #words;
  // The addon's handle of #words, made the first time this instance needs the addon.
  #handle;
  // What a read guard releases: the guard calls unlock() on it.
  #readHold;

  constructor(...location) {
    const { buffer, byteOffset, words } = attach(location, layout);
    this.#words = words;
    this.#readHold = { unlock: () => this.unlockShared() };
    defineLocation(this, { buffer, byteOffset });
  }

  // --- Exclusive (write) side ---

  // Blocks this thread until it holds the write lock; returns a guard that unlocks it.
  lock() {
    if (!this.#tryLockNow()) this.#lockSlow(Infinity);
    return new Guard(this);
  }

  // Takes the write lock if it is granted within timeoutMs (0: only if free now); true if taken.
  tryLock(timeoutMs = 0) {
    validateTimeout(timeoutMs, 'timeoutMs');
    if (this.#tryLockNow()) return true;
    if (this.isWriteLockedByCurrentThread) return this.#refused();
    if (timeoutMs === 0) return this.#takeOver(true);
    return this.#lockSlow(timeoutMs);
  }

  // Resolves to a guard once this thread holds the write lock; never blocks the thread.
  lockAsync(options) {
    const { timeout, signal } = validateAsyncOptions(options);
    // The signal is checked before the CAS: an already-aborted signal must not take the lock.
    if (!isAborted(signal) && this.#tryLockNow()) {
      return Promise.resolve(new Guard(this));
    }
    return waitAsync(
      this,
      (record) => native.rwlockLockAsync(this.#native, record),
      { timeout, signal },
      (settlement) => this.#acquired(settlement, false) && new Guard(this),
    );
  }

  unlock() {
    const words = this.#words;
    const state = Atomics.load(words, STATE_INDEX);
    if (Atomics.load(words, OWNER_INDEX) !== threadId) {
      if (isCorrupt(state)) throw corrupt('rwlock');
      throw lockError('ERR_PARKLOCK_NOT_OWNER', RWLock.#notWriterMessage(state));
    }
    if ((state & WRITER) === 0 || isCorrupt(state)) throw corrupt('rwlock');
    // The owner word first: a writer that takes the lock right after the release below writes
    // its own id, which must not be overwritten.
    Atomics.store(words, OWNER_INDEX, 0);
    if (Atomics.compareExchange(words, STATE_INDEX, WRITER, 0) === WRITER) return;
    native.rwlockReleaseWriteSlow(this.#native);
  }

  // --- Shared (read) side ---

  // Blocks this thread until it holds a read lock; returns a guard that unlocks it.
  lockShared() {
    if (!this.#tryLockSharedNow()) this.#lockSharedSlow(Infinity);
    return new Guard(this.#readHold);
  }

  // Takes a read lock if it is granted within timeoutMs (0: only if available now, which it is
  // not while anybody waits); true if taken.
  tryLockShared(timeoutMs = 0) {
    validateTimeout(timeoutMs, 'timeoutMs');
    if (this.#tryLockSharedNow()) return true;
    if (this.isWriteLockedByCurrentThread) return this.#refused();
    if (timeoutMs === 0) return this.#takeOver(false);
    return this.#lockSharedSlow(timeoutMs);
  }

  // Resolves to a guard once this thread holds a read lock; never blocks the thread.
  lockSharedAsync(options) {
    const { timeout, signal } = validateAsyncOptions(options);
    if (!isAborted(signal) && this.#tryLockSharedNow()) {
      return Promise.resolve(new Guard(this.#readHold));
    }
    return waitAsync(
      this,
      (record) => native.rwlockLockSharedAsync(this.#native, record),
      { timeout, signal },
      (settlement) => this.#acquired(settlement, true) && new Guard(this.#readHold),
    );
  }

  unlockShared() {
    const words = this.#words;
    let state = Atomics.load(words, STATE_INDEX);
    for (;;) {
      if (isCorrupt(state)) throw corrupt('rwlock');
      const readers = readersOf(state);
      if (readers === 0) {
        throw lockError(
          'ERR_PARKLOCK_NOT_OWNER',
          (state & WRITER) !== 0
            ? 'Cannot unlockShared() a write lock; use unlock()'
            : 'Cannot unlockShared() an rwlock that no reader holds',
        );
      }
      // The last read hold of a parked lock hands the lock on: the addon does that.
      if (readers === 1 && (state & PARKED) !== 0) break;
      const seen = Atomics.compareExchange(words, STATE_INDEX, state, state - ONE_READER);
      if (seen === state) return;
      state = seen;
    }
    if (!native.rwlockUnlockSharedSlow(this.#native)) {
      throw lockError('ERR_PARKLOCK_NOT_OWNER', 'Cannot unlockShared() an rwlock that no reader holds');
    }
  }

  // --- Observers (snapshots) ---

  // Held by a writer or by at least one reader.
  get isLocked() {
    return (Atomics.load(this.#words, STATE_INDEX) & ~PARKED) !== 0;
  }

  get isWriteLocked() {
    return (Atomics.load(this.#words, STATE_INDEX) & WRITER) !== 0;
  }

  // How many read holds are outstanding.
  get readers() {
    return readersOf(Atomics.load(this.#words, STATE_INDEX));
  }

  // The Node threadId of the thread that holds the write lock now (a snapshot), or null if it is
  // not write-locked (readers are counted, not named).
  get writer() {
    if ((Atomics.load(this.#words, STATE_INDEX) & WRITER) === 0) return null;
    const owner = Atomics.load(this.#words, OWNER_INDEX);
    return owner === 0 ? null : native.nodeThreadIdOf(owner);
  }

  // Turns this thread's write lock into a read lock, atomically: no writer can come between, and
  // readers waiting at the head of the queue are let in at once. Release it with unlockShared().
  // As Mutex#executeLocked, with the write lock: if the previous writer ended holding the lock, fn
  // does not run and the Promise rejects with the OwnerDiedError, whose guard holds the lock.
  async executeLocked(fn, options) {
    validateFunction(fn, 'fn');
    return runHolding(this.lockAsync(options), fn);
  }

  // The same with a read lock.
  async executeShared(fn, options) {
    validateFunction(fn, 'fn');
    return runHolding(this.lockSharedAsync(options), fn);
  }

  // Rejects every Promise wait that this thread queued through this object and that is still
  // pending, with `reason` (default: an Error with code ERR_PARKLOCK_CANCELLED); returns how many.
  cancelPendingWaits(reason) {
    return cancelPendingWaits(this, reason);
  }

  downgrade() {
    if (!this.isWriteLockedByCurrentThread || !native.rwlockDowngrade(this.#native)) {
      throw lockError('ERR_PARKLOCK_NOT_OWNER', 'Cannot downgrade: this thread does not hold the write lock');
    }
  }

  get isWriteLockedByCurrentThread() {
    return (
      (Atomics.load(this.#words, STATE_INDEX) & WRITER) !== 0 &&
      Atomics.load(this.#words, OWNER_INDEX) === threadId
    );
  }

  // --- Internals ---

  #tryLockNow() {
    if (Atomics.compareExchange(this.#words, STATE_INDEX, 0, WRITER) !== 0) return false;
    Atomics.store(this.#words, OWNER_INDEX, threadId);
    return true;
  }

  // Adds a reader while there is no writer and nobody waits (no barging past waiters).
  #tryLockSharedNow() {
    const words = this.#words;
    let state = Atomics.load(words, STATE_INDEX);
    while (state >= 0 && (state & (WRITER | PARKED)) === 0) {
      if (readersOf(state) >= MAX_READERS) throw tooManyReaders();
      const seen = Atomics.compareExchange(words, STATE_INDEX, state, state + ONE_READER);
      if (seen === state) return true;
      state = seen;
    }
    return false;
  }

  // A try form that will not wait: false, unless the word is corrupt.
  #refused() {
    if (isCorrupt(Atomics.load(this.#words, STATE_INDEX))) throw corrupt('rwlock');
    return false;
  }

  // A try form with timeout 0 whose CAS failed: the lock is this thread's only if its writer has
  // ended (then that is reported); otherwise as #refused().
  #takeOver(exclusive) {
    const settlement = native.rwlockTakeOver(this.#native, exclusive);
    return settlement ? this.#acquired(settlement, !exclusive) : this.#refused();
  }

  #lockSlow(timeoutMs) {
    if (this.isWriteLockedByCurrentThread) throw deadlock();
    return this.#acquired(
      traceBlocking('rwlock', () => native.rwlockLockSlow(this.#native, timeoutMs)),
      false,
    );
  }

  #lockSharedSlow(timeoutMs) {
    if (this.isWriteLockedByCurrentThread) throw deadlock();
    return this.#acquired(
      traceBlocking('rwlock', () => native.rwlockLockSharedSlow(this.#native, timeoutMs)),
      true,
    );
  }

  // true if acquired (in the shared mode if `shared`), false if a synchronous wait timed out;
  // throws otherwise (OwnerDiedError having acquired: its guard releases in that mode).
  #acquired(settlement, shared) {
    return outcome(settlement, RWLOCK, shared ? this.#readHold : this);
  }

  // How many waits are queued on this lock now, in every thread (a snapshot).
  get waiting() { return native.waiting(this.#native); } // prettier-ignore
  get hasWaiters() { return this.waiting > 0; } // prettier-ignore

  get #native() {
    return (this.#handle ??= handleFor(this, this.#words, WORDS));
  }

  static #notWriterMessage(state) {
    if ((state & WRITER) !== 0) return 'Cannot unlock an rwlock write-locked by another thread';
    if (readersOf(state) !== 0) return 'Cannot unlock() a read lock; use unlockShared()';
    return 'Cannot unlock an rwlock that is not write-locked';
  }
}

defineSize(RWLock, layout);
rejectingMethods(RWLock.prototype, 'lockAsync', 'lockSharedAsync');

module.exports = { RWLock };
