'use strict';
// RWLock: the readers-writer lock of addon/rwlock.h (a state word and an owner word), whose layout
// this file reads from the addon's exported constants. While nobody is parked, every lock and
// unlock is one Atomics.compareExchange on the state word (plus the owner word for writers); the
// addon is entered only to wait, or to hand the lock to parked waiters.
//
// Fairness: once anybody waits, newcomers (readers included) queue behind it, and releases grant
// the lock in FIFO order, so a stream of readers cannot starve a writer. Readers are counted, not
// recorded per thread: lock() while this thread holds a plain read lock waits forever and is not
// detected. The upgradable read lock is the way to turn a read into a write: one thread at a time
// holds it, beside plain readers, and upgrade() waits for the other readers to leave.
//
// Owner death: a write lock whose holder's thread ended (terminated, exited, crashed, or its code
// returned) is taken over by the next acquirer in any mode, which gets an OwnerDiedError whose
// guard holds the lock in the mode it asked for. An upgradable read lock whose holder's thread
// ended is released (a read changed nothing).
const native = require('./native');
const { handleFor } = require('./handles');
const { tracing, traceBlocking, traceBlockingNow } = require('./diagnostics');
const { primer } = require('./prime');
const { attach, defineLocation, defineSize } = require('./shared_memory');
const { threadId, waitAsync, cancelPendingWaits } = require('./async_waits');
const { vocabulary, outcome } = require('./outcomes');
const { validateTimeout, validateAsyncOptions, validateFunction } = require('./validate');
const { lockError, corrupt } = require('./errors');
const { Guard, runHolding } = require('./guard');
const { rejectingMethods } = require('./promise_form');
const { isAborted } = require('./signals');

const layout = native.rwlockLayout;
const {
  STATE_INDEX,
  OWNER_INDEX,
  WRITER,
  PARKED,
  UPGRADABLE,
  UPGRADING,
  READER_SHIFT,
  ONE_READER,
  MAX_READERS,
  WORDS,
} = layout;

const { ACQUIRED, ALREADY_HELD } = native.settled;

// The modes of rwlockTakeOver().
const SHARED = 0;
const EXCLUSIVE = 1;
const UPGRADABLE_MODE = 2;

function readersOf(state) {
  return state >>> READER_SHIFT;
}

// Values no operation writes (see the table in addon/rwlock.h).
function isCorrupt(state) {
  return (
    state < 0 ||
    ((state & WRITER) !== 0 && (readersOf(state) !== 0 || (state & (UPGRADABLE | UPGRADING)) !== 0)) ||
    ((state & UPGRADABLE) !== 0 && readersOf(state) === 0) ||
    (state & (UPGRADABLE | UPGRADING)) === UPGRADING ||
    state === PARKED
  );
}

const DEADLOCK =
  'This thread holds the write lock or the upgradable read lock; this wait would wait for it forever';
const RWLOCK = vocabulary({ what: 'rwlock', acquired: true, timedOut: false, deadlock: DEADLOCK });
const NOT_UPGRADER = 'Cannot upgrade: this thread does not hold the upgradable read lock';
const UPGRADE = vocabulary({ what: 'rwlock', acquired: true, timedOut: false, notOwner: NOT_UPGRADER });

function upgradePending(what) {
  return lockError(
    'ERR_PARKLOCK_UPGRADE_PENDING',
    `Cannot ${what}: an upgradeAsync() of this upgradable read lock is pending`,
  );
}

function tooManyReaders() {
  return lockError(
    'ERR_PARKLOCK_TOO_MANY_READERS',
    `The rwlock already has the most read holds it can count (${MAX_READERS})`,
  );
}

// Called by every constructor; primes this thread's contended paths the first time (prime.js).
let prime;

class RWLock {
  #words;
  // The addon's handle of #words, made the first time this instance needs the addon.
  #handle;
  // What a read guard releases: the guard calls unlock() on it.
  #readHold;
  // The guard lock() and lockAsync() return, kept until something releases through it, as Mutex
  // keeps its own (mutex.js): a thread holds the write lock at most once.
  #writeGuard;
  #writeGuardRelease = {
    unlock: () => {
      this.#writeGuard = undefined;
      this.unlock();
    },
  };
  // What the guard of an upgradable read lock releases: whatever that hold has become (the write
  // lock after upgrade(), a read lock after upgrade() and downgrade()).
  #upgradableHold;

  constructor(...location) {
    const { buffer, byteOffset, words } = attach(location, layout);
    this.#words = words;
    this.#readHold = { unlock: () => this.unlockShared() };
    this.#upgradableHold = {
      unlock: () => {
        if (this.isWriteLockedByCurrentThread) this.unlock();
        else if (this.isUpgradableLockedByCurrentThread) this.unlockUpgradable();
        else this.unlockShared();
      },
    };
    defineLocation(this, { buffer, byteOffset });
    prime();
  }

  // The round enters the slow paths on a lock of this thread's own: each blocking acquisition by
  // the writer, which the addon refuses at once; an upgrade beside another reader whose time is
  // already up (upgrade() shares its call into the addon); and each release of a hold whose word
  // is marked parked, which finds nobody queued.
  static {
    prime = primer(() => {
      const lock = new RWLock(new SharedArrayBuffer(WORDS * 4), 0);
      const words = lock.#words;
      const refused = (acquire) => {
        try {
          acquire();
        } catch {
          // the refusal, as expected
        }
      };
      const markParked = () => Atomics.or(words, STATE_INDEX, PARKED);
      return () => {
        lock.lock();
        refused(() => lock.lock());
        refused(() => lock.lockShared());
        refused(() => lock.lockUpgradable());
        markParked();
        lock.unlock();
        lock.lockShared();
        markParked();
        lock.unlockShared();
        lock.lockUpgradable();
        lock.lockShared();
        lock.tryUpgrade(Number.MIN_VALUE);
        lock.unlockShared();
        markParked();
        lock.unlockUpgradable();
      };
    });
  }

  // --- Exclusive (write) side ---

  // Blocks this thread until it holds the write lock; returns a guard that unlocks it.
  lock() {
    if (!this.#tryLockNow()) this.#lockSlow(Infinity);
    return (this.#writeGuard ??= new Guard(this.#writeGuardRelease));
  }

  // Takes the write lock if it is granted within timeoutMs (0: only if free now); true if taken.
  tryLock(timeoutMs = 0) {
    validateTimeout(timeoutMs, 'timeoutMs');
    if (this.#tryLockNow()) return true;
    if (this.#holdsNamed()) return this.#refused();
    if (timeoutMs === 0) return this.#takeOver(EXCLUSIVE);
    return this.#lockSlow(timeoutMs);
  }

  // Resolves to a guard once this thread holds the write lock; never blocks the thread.
  lockAsync(options) {
    const { timeout, signal } = validateAsyncOptions(options);
    // The signal is checked before the CAS: an already-aborted signal must not take the lock.
    if (!isAborted(signal) && this.#tryLockNow()) {
      return Promise.resolve((this.#writeGuard ??= new Guard(this.#writeGuardRelease)));
    }
    return waitAsync(
      this,
      (record) => native.rwlockLockAsync(this.#native, record),
      { timeout, signal },
      (settlement) =>
        this.#acquired(settlement, this) && (this.#writeGuard ??= new Guard(this.#writeGuardRelease)),
    );
  }

  unlock() {
    const words = this.#words;
    const state = Atomics.load(words, STATE_INDEX);
    if (Atomics.load(words, OWNER_INDEX) !== threadId) {
      if (isCorrupt(state)) throw corrupt('rwlock');
      throw lockError('ERR_PARKLOCK_NOT_OWNER', RWLock.#notWriterMessage(state));
    }
    if (isCorrupt(state)) throw corrupt('rwlock');
    if ((state & UPGRADABLE) !== 0) {
      throw lockError('ERR_PARKLOCK_NOT_OWNER', 'Cannot unlock() an upgradable read lock; use unlockUpgradable()');
    }
    if ((state & WRITER) === 0) throw corrupt('rwlock');
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
    if (this.#holdsNamed()) return this.#refused();
    if (timeoutMs === 0) return this.#takeOver(SHARED);
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
      (settlement) => this.#acquired(settlement, this.#readHold) && new Guard(this.#readHold),
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
      if (readers === 1 && (state & UPGRADABLE) !== 0) {
        throw lockError(
          'ERR_PARKLOCK_NOT_OWNER',
          'Cannot unlockShared() the upgradable read lock; use unlockUpgradable()',
        );
      }
      // The last read hold of a parked lock hands the lock on, and a release during an upgrade
      // may leave the upgrader alone: the addon does both.
      if ((readers === 1 && (state & PARKED) !== 0) || (state & UPGRADING) !== 0) break;
      const seen = Atomics.compareExchange(words, STATE_INDEX, state, state - ONE_READER);
      if (seen === state) return;
      state = seen;
    }
    if (!native.rwlockUnlockSharedSlow(this.#native)) {
      throw lockError('ERR_PARKLOCK_NOT_OWNER', 'Cannot unlockShared() an rwlock that no reader holds');
    }
  }

  // --- Upgradable read side ---

  // Blocks this thread until it holds the upgradable read lock: a read lock that one thread at a
  // time may hold beside plain readers, and turn into the write lock with upgrade(). Returns a
  // guard that releases whatever the hold has become by then.
  lockUpgradable() {
    if (!this.#tryLockUpgradableNow()) this.#lockUpgradableSlow(Infinity);
    return new Guard(this.#upgradableHold);
  }

  // Takes the upgradable read lock if it is granted within timeoutMs (0: only if available now);
  // true if taken.
  tryLockUpgradable(timeoutMs = 0) {
    validateTimeout(timeoutMs, 'timeoutMs');
    if (this.#tryLockUpgradableNow()) return true;
    if (this.#holdsNamed()) return this.#refused();
    if (timeoutMs === 0) return this.#takeOver(UPGRADABLE_MODE);
    return this.#lockUpgradableSlow(timeoutMs);
  }

  // Resolves to a guard once this thread holds the upgradable read lock; never blocks the thread.
  lockUpgradableAsync(options) {
    const { timeout, signal } = validateAsyncOptions(options);
    if (!isAborted(signal) && this.#tryLockUpgradableNow()) {
      return Promise.resolve(new Guard(this.#upgradableHold));
    }
    return waitAsync(
      this,
      (record) => native.rwlockLockUpgradableAsync(this.#native, record),
      { timeout, signal },
      (settlement) =>
        this.#acquired(settlement, this.#upgradableHold) && new Guard(this.#upgradableHold),
    );
  }

  unlockUpgradable() {
    const words = this.#words;
    let state = Atomics.load(words, STATE_INDEX);
    if (isCorrupt(state)) throw corrupt('rwlock');
    if (Atomics.load(words, OWNER_INDEX) !== threadId || (state & UPGRADABLE) === 0) {
      throw lockError(
        'ERR_PARKLOCK_NOT_OWNER',
        this.isWriteLockedByCurrentThread
          ? 'Cannot unlockUpgradable() a write lock; use unlock()'
          : 'Cannot unlockUpgradable(): this thread does not hold the upgradable read lock',
      );
    }
    if ((state & UPGRADING) !== 0) throw upgradePending('release the upgradable read lock');
    // The owner word first, as for the write lock.
    Atomics.store(words, OWNER_INDEX, 0);
    for (;;) {
      // Parked waiters may be grantable once this hold is gone: the addon grants them.
      if ((state & PARKED) !== 0) {
        native.rwlockReleaseUpgradableSlow(this.#native);
        return;
      }
      const seen = Atomics.compareExchange(words, STATE_INDEX, state, state - UPGRADABLE - ONE_READER);
      if (seen === state) return;
      state = seen;
    }
  }

  // Turns this thread's upgradable read lock into the write lock, blocking the thread until the
  // other readers have left (no reader joins meanwhile, and no writer can come first).
  upgrade() {
    this.tryUpgrade(Infinity);
  }

  // The same, if the other readers leave within timeoutMs (0: only if this thread is the only
  // reader now); true if upgraded. false keeps the upgradable read lock.
  tryUpgrade(timeoutMs = 0) {
    validateTimeout(timeoutMs, 'timeoutMs');
    this.#checkUpgrader();
    if (this.#tryUpgradeNow()) return true;
    // Without waiters parked, the CAS above was the whole decision; with them, the addon decides
    // under their bucket lock.
    if (timeoutMs === 0 && (Atomics.load(this.#words, STATE_INDEX) & PARKED) === 0) return false;
    return this.#upgraded(
      traceBlocking('rwlock', () => native.rwlockUpgradeSlow(this.#native, timeoutMs)),
    );
  }

  // Resolves once this thread's upgradable read lock is the write lock; never blocks the thread.
  // A timeout or abort rejects, and the upgradable read lock stays.
  upgradeAsync(options) {
    const { timeout, signal } = validateAsyncOptions(options);
    this.#checkUpgrader();
    if (!isAborted(signal) && this.#tryUpgradeNow()) return Promise.resolve();
    return waitAsync(
      this,
      (record) => native.rwlockUpgradeAsync(this.#native, record),
      { timeout, signal },
      (settlement) => {
        this.#upgraded(settlement);
      },
    );
  }

  // The Node threadId of the thread that holds the upgradable read lock now (a snapshot), or null.
  get upgrader() {
    if ((Atomics.load(this.#words, STATE_INDEX) & UPGRADABLE) === 0) return null;
    const owner = Atomics.load(this.#words, OWNER_INDEX);
    return owner === 0 ? null : native.nodeThreadIdOf(owner);
  }

  get isUpgradableLockedByCurrentThread() {
    return (
      (Atomics.load(this.#words, STATE_INDEX) & UPGRADABLE) !== 0 &&
      Atomics.load(this.#words, OWNER_INDEX) === threadId
    );
  }

  // --- Observers (snapshots) ---

  // Held by a writer or by at least one reader.
  get isLocked() {
    return (Atomics.load(this.#words, STATE_INDEX) & ~PARKED) !== 0;
  }

  get isWriteLocked() {
    return (Atomics.load(this.#words, STATE_INDEX) & WRITER) !== 0;
  }

  // How many read holds are outstanding, the upgradable one included.
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

  // Adds a reader while there is no writer, nobody waits (no barging past waiters), and no upgrade
  // waits for the readers to leave.
  #tryLockSharedNow() {
    const words = this.#words;
    let state = Atomics.load(words, STATE_INDEX);
    while (state >= 0 && (state & (WRITER | PARKED | UPGRADING)) === 0) {
      if (readersOf(state) >= MAX_READERS) throw tooManyReaders();
      // The one corrupt value the mask lets through: an upgradable hold without its read hold.
      if ((state & UPGRADABLE) !== 0 && readersOf(state) === 0) throw corrupt('rwlock');
      const seen = Atomics.compareExchange(words, STATE_INDEX, state, state + ONE_READER);
      if (seen === state) return true;
      state = seen;
    }
    return false;
  }

  // Adds the upgradable reader while there is no writer, no upgradable holder and nobody waits.
  #tryLockUpgradableNow() {
    const words = this.#words;
    let state = Atomics.load(words, STATE_INDEX);
    // UPGRADING without UPGRADABLE is corrupt: left to the addon, which says so.
    while (state >= 0 && (state & (WRITER | PARKED | UPGRADABLE | UPGRADING)) === 0) {
      if (readersOf(state) >= MAX_READERS) throw tooManyReaders();
      const seen = Atomics.compareExchange(words, STATE_INDEX, state, state + UPGRADABLE + ONE_READER);
      if (seen === state) {
        Atomics.store(words, OWNER_INDEX, threadId);
        return true;
      }
      state = seen;
    }
    return false;
  }

  // The upgrade when this thread is the only reader and nobody waits: one CAS.
  #tryUpgradeNow() {
    const words = this.#words;
    return (
      Atomics.load(words, OWNER_INDEX) === threadId &&
      Atomics.compareExchange(words, STATE_INDEX, UPGRADABLE | ONE_READER, WRITER) ===
        (UPGRADABLE | ONE_READER)
    );
  }

  // Throws unless this thread holds the upgradable read lock with no upgrade of it pending.
  #checkUpgrader() {
    const state = Atomics.load(this.#words, STATE_INDEX);
    if (isCorrupt(state)) throw corrupt('rwlock');
    if ((state & UPGRADABLE) === 0 || Atomics.load(this.#words, OWNER_INDEX) !== threadId) {
      throw lockError('ERR_PARKLOCK_NOT_OWNER', NOT_UPGRADER);
    }
    if ((state & UPGRADING) !== 0) throw upgradePending('upgrade again');
  }

  // Holds the write lock or the upgradable read lock: the holders the owner word names.
  #holdsNamed() {
    return (
      Atomics.load(this.#words, OWNER_INDEX) === threadId &&
      (Atomics.load(this.#words, STATE_INDEX) & (WRITER | UPGRADABLE)) !== 0
    );
  }

  // A try form that will not wait: false, unless the word is corrupt.
  #refused() {
    if (isCorrupt(Atomics.load(this.#words, STATE_INDEX))) throw corrupt('rwlock');
    return false;
  }

  // A try form with timeout 0 whose CAS failed: the lock is this thread's only if its writer has
  // ended (then that is reported), or if what stood in the way was the upgradable read lock of a
  // thread that has ended (released first); otherwise as #refused().
  #takeOver(mode) {
    const settlement = native.rwlockTakeOver(this.#native, mode);
    if (!settlement) return this.#refused();
    const held =
      mode === EXCLUSIVE ? this : mode === SHARED ? this.#readHold : this.#upgradableHold;
    return this.#acquired(settlement, held);
  }

  // The contended acquisitions: one call into the addon, which waits, or refuses at once a wait
  // by the thread holding the write lock or the upgradable read lock. What is not an acquisition
  // leaves the inlined part through #acquired().
  #lockSlow(timeoutMs) {
    const settlement = tracing()
      ? this.#tracedWait(() => native.rwlockLockSlow(this.#native, timeoutMs))
      : native.rwlockLockSlow(this.#native, timeoutMs);
    return settlement === ACQUIRED || this.#acquired(settlement, this);
  }

  #lockSharedSlow(timeoutMs) {
    const settlement = tracing()
      ? this.#tracedWait(() => native.rwlockLockSharedSlow(this.#native, timeoutMs))
      : native.rwlockLockSharedSlow(this.#native, timeoutMs);
    return settlement === ACQUIRED || this.#acquired(settlement, this.#readHold);
  }

  #lockUpgradableSlow(timeoutMs) {
    const settlement = tracing()
      ? this.#tracedWait(() => native.rwlockLockUpgradableSlow(this.#native, timeoutMs))
      : native.rwlockLockUpgradableSlow(this.#native, timeoutMs);
    return settlement === ACQUIRED || this.#acquired(settlement, this.#upgradableHold);
  }

  // A refused wait is not a wait: it is not published.
  #tracedWait(wait) {
    if (this.#holdsNamed()) return ALREADY_HELD;
    return traceBlockingNow('rwlock', wait);
  }

  // true if acquired, false if a synchronous wait timed out; throws otherwise (OwnerDiedError
  // having acquired: its guard releases `held`, the hold in the mode asked for).
  #acquired(settlement, held) {
    return outcome(settlement, RWLOCK, held);
  }

  // true if upgraded, false if a synchronous upgrade timed out; throws otherwise.
  #upgraded(settlement) {
    return outcome(settlement, UPGRADE, undefined);
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
rejectingMethods(
  RWLock.prototype,
  'lockAsync',
  'lockSharedAsync',
  'lockUpgradableAsync',
  'upgradeAsync',
);

module.exports = { RWLock };
