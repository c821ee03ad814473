'use strict';
// RWLock: the readers-writer lock of addon/primitives/rwlock.h, on a state word and an owner word
// (./rwlock_words.js). While nobody is parked, every lock and unlock is one
// Atomics.compareExchange on the state word (plus the owner word for the named holds); the addon
// is entered only to wait, or to hand the lock to parked waiters.
//
// Fair: once anybody waits, newcomers (readers included) queue behind it and releases grant in
// FIFO order. Readers are counted, not named: lock() by a thread holding a plain read lock waits
// forever, undetected; the upgradable read lock is the way to turn a read into a write. A write
// lock whose holder's thread ended is taken over by the next acquirer, with an OwnerDiedError; an
// upgradable read lock whose holder's thread ended is released. In sharedMemory() the same holds
// across processes (a holder's process that ended counts as its thread ending), but waiters
// compete on each release instead of being served in order (addon/primitives/rwlock_across_processes.cpp).
const native = require('./native');
const { definePlaceable } = require('./placeable');
const { Primitive, wordsOf, handleOf, definePrimitive, acrossProcesses } = require('./primitive');
const { tracing, traceBlocking, traceBlockingNow } = require('./diagnostics');
const { primer } = require('./prime');
const { threadId, waitAsync } = require('./async_waits');
const { outcome } = require('./outcomes');
const { validateTimeout, validateAsyncOptions, validateFunction } = require('./validate');
const { corrupt } = require('./errors');
const { Guard, lockConveniences } = require('./guard');
const { runLocked, runTaken } = require('./run_locked');
const { isAborted } = require('./signals');
const rwlockWords = require('./rwlock_words');
const { HolderSightings, HERE } = require('./ended_holder');

const { layout, SHARED, EXCLUSIVE, UPGRADABLE_MODE, RWLOCK, UPGRADE } = rwlockWords;
const { readersOf, isCorrupt, notOwner, upgradePending, notWriterMessage } = rwlockWords;
const { tryLockNow, tryLockSharedNow, tryLockUpgradableNow, tryUpgradeNow } = rwlockWords;
const { checkUpgrader, holdsNamed, refused, namedHolder, namedHolderProcess, namesMe } = rwlockWords;

const { STATE_INDEX, OWNER_INDEX, WRITER, PARKED, UPGRADABLE, DRAINING, ONE_READER, WORDS } = layout;
const { ACQUIRED, ALREADY_HELD } = native.settled;

// Whether a value is an RWLock: a brand check, as Mutex's.
let isRWLock;
// lockAsync()'s fast path alone, for executeLocked(): takes the write lock if it is free now.
let takeNow;

class RWLock extends Primitive {
  #words = wordsOf(this);
  #inRegion = acrossProcesses(this);
  // Who held it when this object last found it taken, as Mutex keeps it (./ended_holder.js).
  #holders = this.#inRegion ? new HolderSightings(this.#words, Atomics.load(this.#words, OWNER_INDEX)) : HERE;
  // What the owner word names this thread by: its threadId, or in sharedMemory() its identity there.
  #me = this.#inRegion ? native.regionIdentity(this.#words) : threadId;
  // What a read guard releases.
  #readHold = { unlock: () => this.unlockShared() };
  // The guard lock() and lockAsync() return, kept until something releases through it, as
  // Mutex keeps its own: a thread holds the write lock at most once.
  #writeGuard;
  #writeGuardRelease = {
    unlock: () => {
      this.#writeGuard = undefined;
      this.unlock();
    },
  };
  // What the guard of an upgradable read lock releases: whatever that hold has become (the write
  // lock after upgrade(), a read lock after upgrade() and downgrade()).
  #upgradableHold = {
    unlock: () => {
      if (this.isWriteLockedByCurrentThread) this.unlock();
      else if (this.isUpgradableLockedByCurrentThread) this.unlockUpgradable();
      else this.unlockShared();
    },
  };

  static {
    isRWLock = (value) => value !== null && typeof value === 'object' && #words in value;
    takeNow = (rwlock) => tryLockNow(rwlock.#words, rwlock.#me);
  }

  constructor(...location) {
    super(location, layout, 'rwlock');
    prime();
  }

  // --- Exclusive (write) side ---

  // Blocks this thread until it holds the write lock; returns a guard that unlocks it.
  lock() {
    if (!tryLockNow(this.#words, this.#me)) this.#lockSlow(native.rwlockLockSlow, Infinity, this);
    return (this.#writeGuard ??= new Guard(this.#writeGuardRelease));
  }

  // Takes the write lock if it is granted within timeoutMs (0: only if free now); true if taken.
  tryLock(timeoutMs = 0) {
    validateTimeout(timeoutMs, 'timeoutMs');
    if (tryLockNow(this.#words, this.#me)) return true;
    if (holdsNamed(this.#words, this.#me)) return refused(this.#words);
    if (timeoutMs === 0) return this.#takeOver(EXCLUSIVE);
    return this.#lockSlow(native.rwlockLockSlow, timeoutMs, this);
  }

  // Resolves to a guard once this thread holds the write lock; never blocks the thread.
  lockAsync(options) {
    const { timeout, signal } = validateAsyncOptions(options);
    // The signal is checked before the CAS: an already-aborted signal must not take the lock.
    if (!isAborted(signal) && tryLockNow(this.#words, this.#me)) {
      return Promise.resolve((this.#writeGuard ??= new Guard(this.#writeGuardRelease)));
    }
    return this.#lockAsync(native.rwlockLockAsync, timeout, signal, (settlement) =>
      this.#acquired(settlement, this) && (this.#writeGuard ??= new Guard(this.#writeGuardRelease)),
    );
  }

  unlock() {
    const words = this.#words;
    const state = Atomics.load(words, STATE_INDEX);
    // This thread's write hold, waiters or not: the owner word is this thread's own write, or the
    // grant's, which its wake-up published to it.
    if ((state & ~PARKED) === WRITER && words[OWNER_INDEX] === this.#me) return this.#releaseWrite(words);
    if (Atomics.load(words, OWNER_INDEX) !== this.#me) {
      if (isCorrupt(state)) throw corrupt('rwlock');
      throw notOwner(notWriterMessage(state));
    }
    if (isCorrupt(state)) throw corrupt('rwlock');
    if ((state & UPGRADABLE) !== 0) {
      throw notOwner('Cannot unlock() an upgradable read lock; use unlockUpgradable()');
    }
    // In sharedMemory() the owner word also names a writer that drains the readers: this thread's
    // lockAsync(), still waiting.
    if ((state & WRITER) === 0) {
      if ((state & DRAINING) === 0) throw corrupt('rwlock');
      throw notOwner('Cannot unlock an rwlock whose write lock this thread still waits for');
    }
    this.#releaseWrite(words);
  }

  #releaseWrite(words) {
    // The owner word first: a writer that takes the lock right after the release below writes
    // its own id, which must not be overwritten. A plain store: the CAS that frees the state
    // publishes it (see tryLockNow()).
    words[OWNER_INDEX] = 0;
    if (Atomics.compareExchange(words, STATE_INDEX, WRITER, 0) === WRITER) return;
    native.rwlockReleaseWriteSlow(handleOf(this));
  }

  // Turns this thread's write lock into a read lock, atomically: no writer can come between, and
  // readers waiting at the head of the queue are let in at once. Release it with unlockShared().
  downgrade() {
    if (!this.isWriteLockedByCurrentThread || !native.rwlockDowngrade(handleOf(this))) {
      throw notOwner('Cannot downgrade: this thread does not hold the write lock');
    }
  }

  // --- Shared (read) side ---

  // Blocks this thread until it holds a read lock; returns a guard that unlocks it.
  lockShared() {
    if (!tryLockSharedNow(this.#words)) {
      this.#lockSlow(native.rwlockLockSharedSlow, Infinity, this.#readHold);
    }
    return new Guard(this.#readHold);
  }

  // Takes a read lock if it is granted within timeoutMs (0: only if available now, which it is
  // not while anybody waits); true if taken.
  tryLockShared(timeoutMs = 0) {
    validateTimeout(timeoutMs, 'timeoutMs');
    if (tryLockSharedNow(this.#words)) return true;
    if (holdsNamed(this.#words, this.#me)) return refused(this.#words);
    if (timeoutMs === 0) return this.#takeOver(SHARED);
    return this.#lockSlow(native.rwlockLockSharedSlow, timeoutMs, this.#readHold);
  }

  // Resolves to a guard once this thread holds a read lock; never blocks the thread.
  lockSharedAsync(options) {
    const { timeout, signal } = validateAsyncOptions(options);
    if (!isAborted(signal) && tryLockSharedNow(this.#words)) {
      return Promise.resolve(new Guard(this.#readHold));
    }
    return this.#lockAsync(native.rwlockLockSharedAsync, timeout, signal, (settlement) =>
      this.#acquired(settlement, this.#readHold) && new Guard(this.#readHold),
    );
  }

  unlockShared() {
    const words = this.#words;
    let state = Atomics.load(words, STATE_INDEX);
    for (;;) {
      if (isCorrupt(state)) throw corrupt('rwlock');
      const readers = readersOf(state);
      if (readers === 0) {
        throw notOwner(
          (state & WRITER) !== 0
            ? 'Cannot unlockShared() a write lock; use unlock()'
            : 'Cannot unlockShared() an rwlock that no reader holds',
        );
      }
      if (readers === 1 && (state & UPGRADABLE) !== 0) {
        throw notOwner('Cannot unlockShared() the upgradable read lock; use unlockUpgradable()');
      }
      // The last read hold of a parked lock hands the lock on, and a release during a drain may
      // leave the draining writer with the readers it waits for: the addon does both.
      if ((readers === 1 && (state & PARKED) !== 0) || (state & DRAINING) !== 0) break;
      const seen = Atomics.compareExchange(words, STATE_INDEX, state, state - ONE_READER);
      if (seen === state) return;
      state = seen;
    }
    if (!native.rwlockUnlockSharedSlow(handleOf(this))) {
      throw notOwner('Cannot unlockShared() an rwlock that no reader holds');
    }
  }

  // --- Upgradable read side ---

  // Blocks this thread until it holds the upgradable read lock: a read lock that one thread at a
  // time may hold beside plain readers, and turn into the write lock with upgrade(). Returns a
  // guard that releases whatever the hold has become by then.
  lockUpgradable() {
    if (!tryLockUpgradableNow(this.#words, this.#me)) {
      this.#lockSlow(native.rwlockLockUpgradableSlow, Infinity, this.#upgradableHold);
    }
    return new Guard(this.#upgradableHold);
  }

  // Takes the upgradable read lock if it is granted within timeoutMs (0: only if available now);
  // true if taken.
  tryLockUpgradable(timeoutMs = 0) {
    validateTimeout(timeoutMs, 'timeoutMs');
    if (tryLockUpgradableNow(this.#words, this.#me)) return true;
    if (holdsNamed(this.#words, this.#me)) return refused(this.#words);
    if (timeoutMs === 0) return this.#takeOver(UPGRADABLE_MODE);
    return this.#lockSlow(native.rwlockLockUpgradableSlow, timeoutMs, this.#upgradableHold);
  }

  // Resolves to a guard once this thread holds the upgradable read lock; never blocks the thread.
  lockUpgradableAsync(options) {
    const { timeout, signal } = validateAsyncOptions(options);
    if (!isAborted(signal) && tryLockUpgradableNow(this.#words, this.#me)) {
      return Promise.resolve(new Guard(this.#upgradableHold));
    }
    return this.#lockAsync(native.rwlockLockUpgradableAsync, timeout, signal, (settlement) =>
      this.#acquired(settlement, this.#upgradableHold) && new Guard(this.#upgradableHold),
    );
  }

  unlockUpgradable() {
    const words = this.#words;
    let state = Atomics.load(words, STATE_INDEX);
    if (isCorrupt(state)) throw corrupt('rwlock');
    if (Atomics.load(words, OWNER_INDEX) !== this.#me || (state & UPGRADABLE) === 0) {
      throw notOwner(
        this.isWriteLockedByCurrentThread
          ? 'Cannot unlockUpgradable() a write lock; use unlock()'
          : 'Cannot unlockUpgradable(): this thread does not hold the upgradable read lock',
      );
    }
    if ((state & DRAINING) !== 0) throw upgradePending('release the upgradable read lock');
    // The owner word first, as for the write lock.
    Atomics.store(words, OWNER_INDEX, 0);
    for (;;) {
      // Parked waiters may be grantable once this hold is gone: the addon grants them.
      if ((state & PARKED) !== 0) {
        native.rwlockReleaseUpgradableSlow(handleOf(this));
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
    checkUpgrader(this.#words, this.#me);
    if (tryUpgradeNow(this.#words, this.#me)) return true;
    // Without waiters parked, the CAS above was the whole decision; with them, the addon decides
    // under their bucket lock.
    if (timeoutMs === 0 && (Atomics.load(this.#words, STATE_INDEX) & PARKED) === 0) return false;
    return this.#upgraded(
      traceBlocking('rwlock', () => native.rwlockUpgradeSlow(handleOf(this), timeoutMs)),
    );
  }

  // Resolves once this thread's upgradable read lock is the write lock; never blocks the thread.
  // A timeout or abort rejects, and the upgradable read lock stays.
  upgradeAsync(options) {
    const { timeout, signal } = validateAsyncOptions(options);
    checkUpgrader(this.#words, this.#me);
    if (!isAborted(signal) && tryUpgradeNow(this.#words, this.#me)) return Promise.resolve();
    return this.#lockAsync(native.rwlockUpgradeAsync, timeout, signal, (settlement) => {
      this.#upgraded(settlement);
    });
  }

  // executeLocked(fn, options) with a read lock. executeLocked() (with the write lock) and
  // waitForUnlock() are Mutex's (./guard.js): waitForUnlock() waits until neither readers nor a
  // writer hold the lock, taking its turn in the queue as a writer, which later readers wait behind.
  executeShared(fn, options) {
    if (typeof fn === 'function' && options === undefined && isRWLock(this)) {
      let taken;
      try {
        taken = tryLockSharedNow(this.#words);
      } catch (error) {
        // Too many readers, or a corrupt word: what lockSharedAsync() rejects with.
        return Promise.reject(error);
      }
      if (taken) return runTaken(this, this.unlockShared, fn);
    }
    return executeSharedQueued(this, fn, options);
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

  // The Node threadId of the thread that holds the write lock now, or null (also when it is not
  // a Node thread, or another process's); readers are counted, not named.
  get writer() {
    return namedHolder(this.#words, WRITER, this.#inRegion);
  }

  // The same for the upgradable read lock.
  get upgrader() {
    return namedHolder(this.#words, UPGRADABLE, this.#inRegion);
  }

  // In sharedMemory(): the pid of the process whose thread holds the write lock now, or null if
  // none does or its identity has been reused. In a SharedArrayBuffer: this process's pid while
  // the write lock is held.
  get writerProcess() {
    return namedHolderProcess(this.#words, WRITER, this.#inRegion);
  }

  // The same for the upgradable read lock.
  get upgraderProcess() {
    return namedHolderProcess(this.#words, UPGRADABLE, this.#inRegion);
  }

  get isWriteLockedByCurrentThread() {
    return namesMe(this.#words, WRITER, this.#me);
  }

  get isUpgradableLockedByCurrentThread() {
    return namesMe(this.#words, UPGRADABLE, this.#me);
  }

  // --- Internals ---

  // A try form with timeout 0 whose CAS failed: the lock is this thread's only if its writer has
  // ended (then that is reported), or if what stood in the way was the upgradable read lock of a
  // thread that has ended (released first); otherwise as refused().
  #takeOver(mode) {
    this.#see();
    const settlement = native.rwlockTakeOver(handleOf(this), mode);
    if (!settlement) return refused(this.#words);
    const held =
      mode === EXCLUSIVE ? this : mode === SHARED ? this.#readHold : this.#upgradableHold;
    return this.#acquired(settlement, held);
  }

  // The contended acquisitions: one call into the addon (`lockSlow`, one of its
  // rwlockLock*Slow), which waits, or refuses at once a wait by the thread holding the write lock
  // or the upgradable read lock. What is not an acquisition leaves through #acquired().
  #lockSlow(lockSlow, timeoutMs, held) {
    this.#see();
    const settlement = tracing()
      ? this.#tracedWait(() => lockSlow(handleOf(this), timeoutMs))
      : lockSlow(handleOf(this), timeoutMs);
    return settlement === ACQUIRED || this.#acquired(settlement, held);
  }

  // A refused wait is not a wait: it is not published.
  #tracedWait(wait) {
    if (holdsNamed(this.#words, this.#me)) return ALREADY_HELD;
    return traceBlockingNow('rwlock', wait);
  }

  // The Promise wait whose fast path failed: `startAsync` is one of the addon's rwlock*Async.
  #lockAsync(startAsync, timeout, signal, interpret) {
    this.#see();
    return waitAsync(this, (record) => startAsync(handleOf(this), record), { timeout, signal }, interpret);
  }

  // true if acquired, false if a synchronous wait timed out; throws otherwise (OwnerDiedError
  // having acquired: its guard releases `held`, the hold in the mode asked for).
  #acquired(settlement, held) {
    return outcome(settlement, RWLOCK, held, this.#holders);
  }

  // Notes the holder the owner word names (a writer's, or the upgradable read lock's, which may
  // become the writer), where holders are looked at (sharedMemory()).
  #see() {
    if (this.#holders === HERE) return;
    const owner = Atomics.load(this.#words, OWNER_INDEX);
    if (owner !== this.#me) this.#holders.see(owner);
  }

  // true if upgraded, false if a synchronous upgrade timed out; throws otherwise.
  #upgraded(settlement) {
    return outcome(settlement, UPGRADE, undefined);
  }
}

// executeShared() but for a read lock taken at once (as executeLocked()'s in ./guard.js).
async function executeSharedQueued(rwlock, fn, options) {
  validateFunction(fn, 'fn');
  return runLocked(rwlock.lockSharedAsync(options), fn, 'RWLock.executeShared()');
}

definePrimitive(
  RWLock,
  layout,
  ['lockAsync', 'lockSharedAsync', 'lockUpgradableAsync', 'upgradeAsync', 'waitForUnlock'],
  lockConveniences('RWLock', isRWLock, takeNow),
);
definePlaceable(RWLock, (memory, byteOffset) => new RWLock(memory, byteOffset));

// The round enters the slow paths on a lock of this thread's own: each blocking acquisition by
// the writer, which the addon refuses at once; an upgrade beside another reader whose time is
// already up (upgrade() shares its call into the addon); and each release of a hold whose word
// is marked parked, which finds nobody queued.
const prime = primer(() => {
  const lock = new RWLock(new SharedArrayBuffer(WORDS * 4), 0);
  const refusal = (acquire) => {
    try {
      acquire();
    } catch {
      // the refusal, as expected
    }
  };
  const markParked = () => Atomics.or(wordsOf(lock), STATE_INDEX, PARKED);
  return () => {
    lock.lock();
    refusal(() => lock.lock());
    refusal(() => lock.lockShared());
    refusal(() => lock.lockUpgradable());
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

module.exports = { RWLock };
