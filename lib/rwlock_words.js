'use strict';
// The RWLock's two words (addon/primitives/rwlock.h: a state word and an owner word): what the state means,
// which values are corrupt, the errors that name them, and the CAS steps that take a hold while
// nobody is parked, each a function of the words. `me` is what the owner word names this thread
// by: its threadId, or in sharedMemory() its identity in that region.
const native = require('./native');
const { vocabulary } = require('./outcomes');
const { lockError, corrupt } = require('./errors');

const layout = native.rwlockLayout;
const { STATE_INDEX, OWNER_INDEX, WRITER, PARKED, UPGRADABLE, DRAINING, READER_SHIFT } = layout;
const { ONE_READER, MAX_READERS } = layout;

// The modes of rwlockTakeOver().
const SHARED = 0;
const EXCLUSIVE = 1;
const UPGRADABLE_MODE = 2;

function readersOf(state) {
  return state >>> READER_SHIFT;
}

// Values no operation writes (see the table in addon/primitives/rwlock.h).
function isCorrupt(state) {
  return (
    state < 0 ||
    ((state & WRITER) !== 0 && (readersOf(state) !== 0 || (state & (UPGRADABLE | DRAINING)) !== 0)) ||
    ((state & UPGRADABLE) !== 0 && readersOf(state) === 0) ||
    state === PARKED
  );
}

const RWLOCK = vocabulary({
  what: 'rwlock',
  acquired: true,
  timedOut: false,
  deadlock:
    'This thread holds the write lock or the upgradable read lock; this wait would wait for it forever',
});
const NOT_UPGRADER = 'Cannot upgrade: this thread does not hold the upgradable read lock';
const UPGRADE = vocabulary({ what: 'rwlock', acquired: true, timedOut: false, notOwner: NOT_UPGRADER });

function notOwner(message) {
  return lockError('ERR_PARKLOCK_NOT_OWNER', message);
}

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

// Why unlock() by a thread that does not hold the write lock fails.
function notWriterMessage(state) {
  if ((state & WRITER) !== 0) return 'Cannot unlock an rwlock write-locked by another thread';
  if (readersOf(state) !== 0) return 'Cannot unlock() a read lock; use unlockShared()';
  return 'Cannot unlock an rwlock that is not write-locked';
}

function tryLockNow(words, me) {
  if (Atomics.compareExchange(words, STATE_INDEX, 0, WRITER) !== 0) return false;
  // A plain store, as the addon's is relaxed: the owner word is this thread's until its release,
  // which publishes it with the CAS that frees the state, and other threads only read it beside
  // the state, as a name (an Atomics.store, a full fence, cost the write side a third of its
  // speed).
  words[OWNER_INDEX] = me;
  return true;
}

// Adds a reader while there is no writer, nobody waits (no barging past waiters), and no upgrade
// waits for the readers to leave.
function tryLockSharedNow(words) {
  let state = Atomics.load(words, STATE_INDEX);
  while (state >= 0 && (state & (WRITER | PARKED | DRAINING)) === 0) {
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
function tryLockUpgradableNow(words, me) {
  let state = Atomics.load(words, STATE_INDEX);
  while (state >= 0 && (state & (WRITER | PARKED | UPGRADABLE | DRAINING)) === 0) {
    if (readersOf(state) >= MAX_READERS) throw tooManyReaders();
    const seen = Atomics.compareExchange(words, STATE_INDEX, state, state + UPGRADABLE + ONE_READER);
    if (seen === state) {
      Atomics.store(words, OWNER_INDEX, me);
      return true;
    }
    state = seen;
  }
  return false;
}

// The upgrade when this thread is the only reader and nobody waits: one CAS.
function tryUpgradeNow(words, me) {
  return (
    Atomics.load(words, OWNER_INDEX) === me &&
    Atomics.compareExchange(words, STATE_INDEX, UPGRADABLE | ONE_READER, WRITER) ===
      (UPGRADABLE | ONE_READER)
  );
}

// Throws unless this thread holds the upgradable read lock with no upgrade of it pending.
function checkUpgrader(words, me) {
  const state = Atomics.load(words, STATE_INDEX);
  if (isCorrupt(state)) throw corrupt('rwlock');
  if ((state & UPGRADABLE) === 0 || Atomics.load(words, OWNER_INDEX) !== me) {
    throw notOwner(NOT_UPGRADER);
  }
  if ((state & DRAINING) !== 0) throw upgradePending('upgrade again');
}

// This thread holds the write lock or the upgradable read lock: the holds the owner word names.
function holdsNamed(words, me) {
  return (
    Atomics.load(words, OWNER_INDEX) === me &&
    (Atomics.load(words, STATE_INDEX) & (WRITER | UPGRADABLE)) !== 0
  );
}

// A try form that will not wait: false, unless the state is corrupt.
function refused(words) {
  if (isCorrupt(Atomics.load(words, STATE_INDEX))) throw corrupt('rwlock');
  return false;
}

// The owner word if the state has `bit` (a snapshot), or 0.
function namedOwner(words, bit) {
  return (Atomics.load(words, STATE_INDEX) & bit) === 0 ? 0 : Atomics.load(words, OWNER_INDEX);
}

// The Node threadId of the thread named by the owner word if the state has `bit`, or null (also
// for another process's thread: `inRegion`, the words lie in sharedMemory()).
function namedHolder(words, bit, inRegion) {
  const owner = namedOwner(words, bit);
  if (owner === 0) return null;
  return inRegion ? (native.regionHolder(words, owner)?.[1] ?? null) : native.nodeThreadIdOf(owner);
}

// The pid of the process whose thread the owner word names if the state has `bit`, or null (also
// once that identity has been reused).
function namedHolderProcess(words, bit, inRegion) {
  const owner = namedOwner(words, bit);
  if (owner === 0) return null;
  return inRegion ? (native.regionHolder(words, owner)?.[0] ?? null) : process.pid;
}

// Whether this thread is the one the owner word names and the state has `bit`.
function namesMe(words, bit, me) {
  return (Atomics.load(words, STATE_INDEX) & bit) !== 0 && Atomics.load(words, OWNER_INDEX) === me;
}

module.exports = {
  layout,
  SHARED,
  EXCLUSIVE,
  UPGRADABLE_MODE,
  RWLOCK,
  UPGRADE,
  readersOf,
  isCorrupt,
  notOwner,
  upgradePending,
  notWriterMessage,
  tryLockNow,
  tryLockSharedNow,
  tryLockUpgradableNow,
  tryUpgradeNow,
  checkUpgrader,
  holdsNamed,
  refused,
  namedHolder,
  namedHolderProcess,
  namesMe,
};
