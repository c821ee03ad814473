'use strict';
// Mutex (alias AsyncLock): the three-state mutex of addon/primitives/mutex.h, whose word layout this file
// reads from the addon's exported constants. Both fast paths are one Atomics.compareExchange on
// the word; the addon is entered only on contention.
const native = require('./native');
const { definePlaceable } = require('./placeable');
const { Primitive, wordsOf, handleOf, definePrimitive, acrossProcesses } = require('./primitive');
const { tracing, traceBlockingNow } = require('./diagnostics');
const { primer } = require('./prime');
const { threadId, settled, waitAsync } = require('./async_waits');
const { vocabulary, outcome } = require('./outcomes');
const { validateTimeout, validateAsyncOptions } = require('./validate');
const { lockError, corrupt, TimeoutError, OwnerDiedError } = require('./errors');
const { Guard, lockConveniences } = require('./guard');
const { rejectingThrows } = require('./promise_form');
const { isAborted } = require('./signals');
const { HolderSightings, HERE } = require('./ended_holder');

const layout = native.mutexLayout;
const { UNLOCKED, LOCKED, LOCKED_PARKED, OWNER_SHIFT, STATE_MASK, WORDS } = layout;
const { ACQUIRED, ALREADY_HELD } = native.settled;
// This thread's word when it holds the mutex and nobody is parked (a mutex in sharedMemory()
// names this thread by its identity in that region instead).
const HELD_BY_ME = (threadId << OWNER_SHIFT) | LOCKED;

const MUTEX = vocabulary({
  what: 'mutex',
  acquired: true,
  timedOut: false,
  deadlock:
    'This thread already holds the mutex (a pending lockAsync() of this thread was handed it ' +
    'while the thread was blocked waiting for it)',
});

function ownerOf(word) {
  return word >>> OWNER_SHIFT;
}

// The addon's handle of a Mutex's word, for a Condition wait about to release the mutex and take
// it again, and whether a value is a Mutex: a brand check, which unlike instanceof neither runs a
// Proxy's traps nor accepts an object made from Mutex.prototype.
let handleForWait;
let isMutex;
let isRegionMutex;
// The fast path of lockAsync() and executeLocked(): takes the mutex if it is free now.
let takeNow;
// lockAsync() of a mutex (or of anything: it rejects what is not one) as a Promise form.
let lockAsyncOf;

class Mutex extends Primitive {
  #word = wordsOf(this);
  // Who held it when this object last found it taken, for an OwnerDiedError: in sharedMemory(),
  // described first before this thread takes its identity there, which may reuse the slot of a
  // holder that died (./ended_holder.js).
  #holders = acrossProcesses(this) ? new HolderSightings(this.#word, ownerOf(Atomics.load(this.#word, 0))) : HERE;
  // HELD_BY_ME, or in sharedMemory() this thread's word there.
  #heldByMe = acrossProcesses(this) ? (native.regionIdentity(this.#word) << OWNER_SHIFT) | LOCKED : HELD_BY_ME;
  // The guard lock() and lockAsync() return, kept until something releases through it or a
  // Condition wait releases the mutex (handleForWait). A thread holds the mutex at most once, so a
  // kept guard can reach nothing but that same unlock(). Handing it out again spares an allocation
  // per acquisition, which unoptimized code pays for dearly (the burst benchmark).
  #guard;
  // What #guard releases: the mutex, after forgetting #guard (a released guard is never reused).
  #guardRelease = {
    unlock: () => {
      this.#guard = undefined;
      this.unlock();
    },
  };

  static {
    handleForWait = (mutex) => {
      // The hold the wait releases is taken again for the same holder, who may still release it
      // through the kept guard: another acquisition meanwhile (an async task of this thread) must
      // not be handed that guard too.
      mutex.#guard = undefined;
      return handleOf(mutex);
    };
    isMutex = (value) => value !== null && typeof value === 'object' && #word in value;
    isRegionMutex = (mutex) => mutex.#heldByMe !== HELD_BY_ME;
    takeNow = (mutex) => Atomics.compareExchange(mutex.#word, 0, UNLOCKED, mutex.#heldByMe) === UNLOCKED;
    lockAsyncOf = rejectingThrows(function lockAsync(mutex, options) {
      const { timeout, signal } = validateAsyncOptions(options);
      // The signal is checked before the CAS: an already-aborted signal must not take the lock.
      if (!isAborted(signal) && takeNow(mutex)) {
        return Promise.resolve((mutex.#guard ??= new Guard(mutex.#guardRelease)));
      }
      mutex.#see(Atomics.load(mutex.#word, 0));
      return waitAsync(
        mutex,
        (record) => native.mutexLockAsync(handleOf(mutex), record),
        { timeout, signal },
        (settlement) => mutex.#acquired(settlement) && (mutex.#guard ??= new Guard(mutex.#guardRelease)),
      );
    });
  }

  #ownedByMe(word) {
    return word !== UNLOCKED && ownerOf(word) === this.#heldByMe >>> OWNER_SHIFT;
  }

  constructor(...location) {
    super(location, layout, 'mutex');
    prime();
  }

  // Blocks this thread until it holds the mutex; returns a guard that unlocks it.
  lock() {
    const seen = Atomics.compareExchange(this.#word, 0, UNLOCKED, this.#heldByMe);
    if (seen !== UNLOCKED) this.#lockSlow(Infinity, seen);
    return (this.#guard ??= new Guard(this.#guardRelease));
  }

  // Takes the mutex if it is free within timeoutMs (0: only if free now); true if taken.
  tryLock(timeoutMs = 0) {
    validateTimeout(timeoutMs, 'timeoutMs');
    if (Atomics.compareExchange(this.#word, 0, UNLOCKED, this.#heldByMe) === UNLOCKED) return true;
    if (this.isHeldByCurrentThread) return false;
    // Taken: by a thread that has ended, the mutex is this thread's now (and that is reported).
    this.#see(Atomics.load(this.#word, 0));
    if (timeoutMs === 0) return this.#acquired(native.mutexTakeOver(handleOf(this)) || settled.TIMED_OUT);
    return this.#lockSlow(timeoutMs, UNLOCKED);
  }

  unlock() {
    const mine = this.#heldByMe;
    if (Atomics.compareExchange(this.#word, 0, mine, UNLOCKED) === mine) return;
    this.#unlockSlow();
  }

  // Resolves to a guard once this thread holds the mutex; never blocks the thread. The call
  // without options on a free mutex cannot throw, so it runs ahead of the Promise form's rejecting
  // wrapper, whose rest parameters a cold caller pays for on every call (the burst).
  lockAsync(options) {
    if (options === undefined && isMutex(this) && takeNow(this)) {
      return Promise.resolve((this.#guard ??= new Guard(this.#guardRelease)));
    }
    return lockAsyncOf(this, options);
  }

  get isLocked() {
    return Atomics.load(this.#word, 0) !== UNLOCKED;
  }

  // The Node threadId of the thread that holds the mutex now (a snapshot), or null if it is
  // unlocked (or held by a thread that is not a Node thread).
  get holder() {
    const word = Atomics.load(this.#word, 0);
    if (word === UNLOCKED) return null;
    if (this.#heldByMe === HELD_BY_ME) return native.nodeThreadIdOf(ownerOf(word));
    // In sharedMemory(): a thread of this process, or null for another process's (holderProcess).
    return native.regionHolder(this.#word, ownerOf(word))?.[1] ?? null;
  }

  // In sharedMemory(): the pid of the process whose thread holds the mutex now, or null if it is
  // unlocked or its holder's identity has been reused. For a mutex in a SharedArrayBuffer: this
  // process's pid while it is locked.
  get holderProcess() {
    const word = Atomics.load(this.#word, 0);
    if (word === UNLOCKED) return null;
    if (this.#heldByMe === HELD_BY_ME) return process.pid;
    const who = native.regionHolder(this.#word, ownerOf(word));
    return who === null ? null : who[0];
  }

  get isHeldByCurrentThread() {
    return this.#ownedByMe(Atomics.load(this.#word, 0));
  }

  // The contended lock: one call into the addon, which waits, or refuses at once a mutex this
  // thread holds already. `seen` is the word the caller's CAS found (tryLock(), which has ruled
  // out a relock, passes UNLOCKED). What is not an acquisition leaves the inlined part through
  // #notAcquired().
  #lockSlow(timeoutMs, seen) {
    this.#see(seen);
    const settlement = tracing()
      ? this.#lockSlowTraced(timeoutMs, seen)
      : native.mutexLockSlow(handleOf(this), timeoutMs);
    return settlement === ACQUIRED || this.#notAcquired(settlement, seen);
  }

  // A refused relock is not a wait: it is not published.
  #lockSlowTraced(timeoutMs, seen) {
    if (this.#ownedByMe(seen)) return ALREADY_HELD;
    return traceBlockingNow('mutex', () => native.mutexLockSlow(handleOf(this), timeoutMs));
  }

  #notAcquired(settlement, seen) {
    // Held by this thread before the call: a relock. Otherwise ALREADY_HELD means one of this
    // thread's own Promise waits was handed the mutex while the thread blocked (the vocabulary).
    if (settlement === ALREADY_HELD && this.#ownedByMe(seen)) {
      throw lockError(
        'ERR_PARKLOCK_DEADLOCK',
        'This thread already holds the mutex; locking it again would wait forever',
      );
    }
    return this.#acquired(settlement);
  }

  // true if acquired, false if a synchronous wait timed out; throws otherwise (OwnerDiedError
  // having acquired).
  #acquired(settlement) {
    return outcome(settlement, MUTEX, this, this.#holders);
  }

  // Notes the holder that the word `word` names, where holders are looked at (sharedMemory()).
  #see(word) {
    if (this.#holders !== HERE) this.#holders.see(ownerOf(word));
  }

  // The addon releases (waking a waiter if any are parked) or refuses; the reason is looked up
  // only then.
  #unlockSlow() {
    if (!native.mutexUnlockSlow(handleOf(this))) this.#refuseUnlock();
  }

  #refuseUnlock() {
    const word = Atomics.load(this.#word, 0);
    // Owner bits with state 0, or state 3: values no operation writes.
    const state = word & STATE_MASK;
    if (word !== UNLOCKED && state !== LOCKED && state !== LOCKED_PARKED) throw corrupt('mutex');
    throw lockError(
      'ERR_PARKLOCK_NOT_OWNER',
      word === UNLOCKED
        ? 'Cannot unlock a mutex that is not locked'
        : 'Cannot unlock a mutex held by another thread',
    );
  }
}

// executeLocked() and waitForUnlock(): ./guard.js.
definePrimitive(Mutex, layout, ['waitForUnlock'], lockConveniences('Mutex', isMutex, takeNow));
definePlaceable(Mutex, (memory, byteOffset) => new Mutex(memory, byteOffset));

// The round enters both slow paths on a mutex of this thread's own: a relock, which the addon
// refuses at once, and an unlock of a word marked parked, which finds nobody queued.
const prime = primer(() => {
  const mutex = new Mutex(new SharedArrayBuffer(WORDS * 4), 0);
  return () => {
    mutex.lock();
    try {
      mutex.lock();
    } catch {
      // the refusal, as expected
    }
    Atomics.store(wordsOf(mutex), 0, (threadId << OWNER_SHIFT) | LOCKED_PARKED);
    mutex.unlock();
  };
});

module.exports = { Mutex, AsyncLock: Mutex, TimeoutError, OwnerDiedError, handleForWait, isMutex, isRegionMutex };
