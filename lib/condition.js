'use strict';
// Condition: a condition variable used with a Mutex (addon/primitives/condition.h). wait() releases the
// mutex, sleeps until notified, and returns holding it again. notifyAll() moves the waiters onto
// the mutex's queue instead of waking them all to fight over it. Notifying a condition nobody
// waits on stays in JavaScript. In sharedMemory() it waits across processes, with a Mutex there.
const native = require('./native');
const { HERE, UNKNOWN } = require('./ended_holder');
const { definePlaceable } = require('./placeable');
const { Primitive, wordsOf, handleOf, definePrimitive, acrossProcesses } = require('./primitive');
const { traceBlocking } = require('./diagnostics');
const { waitAsync } = require('./async_waits');
const { vocabulary, outcome } = require('./outcomes');
const { handleForWait, isMutex, isRegionMutex } = require('./mutex');
const { validateTimeout, validateAsyncOptions } = require('./validate');
const { invalidArgType, lockError } = require('./errors');
const { primer } = require('./prime');

const layout = native.conditionLayout;
const { NO_WAITERS, MAY_HAVE_WAITERS, WORDS } = layout;

const NOT_OWNER = 'Condition wait requires the mutex to be held by this thread';
// How a wait on a mutex ended: true if notified, false if it timed out. OWNER_DIED: re-acquired,
// but from an owner that ended holding the mutex, so the data needs repair.
const CONDITION = vocabulary({
  what: 'mutex or condition',
  acquired: true,
  timedOut: false,
  ownerDied: 'mutex',
  deadlock:
    'This thread cannot re-acquire the mutex: a pending lockAsync() of this thread was handed ' +
    'it while the thread was blocked in Condition#wait',
  notOwner: NOT_OWNER,
});

// The hint bit is clear: nobody waits, in any process (in sharedMemory() the rest of the word
// counts notifies, which do not concern a notify that finds nobody).
const noWaiters = (word) => (Atomics.load(word, 0) & MAY_HAVE_WAITERS) === NO_WAITERS;

// A condition that other processes notify must be waited on with a mutex they hold too:
// otherwise a notification could come between the check of the predicate and the wait.
function heldMutexHandle(condition, mutex) {
  if (!isMutex(mutex)) throw invalidArgType('mutex', 'an instance of Mutex', mutex);
  if (acrossProcesses(condition) && !isRegionMutex(mutex)) {
    throw invalidArgType('mutex', 'a Mutex in sharedMemory(), as the Condition is', mutex);
  }
  if (!mutex.isHeldByCurrentThread) throw lockError('ERR_PARKLOCK_NOT_OWNER', NOT_OWNER);
  return handleForWait(mutex);
}

// Who a holder that ended while this thread waited to re-acquire `mutex` was: a thread here, or
// in sharedMemory() not looked at (./ended_holder.js).
const relockHolders = (mutex) => (isRegionMutex(mutex) ? UNKNOWN : HERE);

class Condition extends Primitive {
  #word = wordsOf(this);

  constructor(...location) {
    super(location, layout, 'condition');
    prime();
  }

  // Releases `mutex` (held by this thread), blocks until notified or timeoutMs passes, and
  // re-acquires the mutex. true if notified, false on timeout; the mutex is held either way.
  wait(mutex, timeoutMs = Infinity) {
    const mutexHandle = heldMutexHandle(this, mutex);
    validateTimeout(timeoutMs, 'timeoutMs');
    const settlement = traceBlocking('condition', () =>
      native.conditionWait(handleOf(this), mutexHandle, timeoutMs),
    );
    return outcome(settlement, CONDITION, mutex, relockHolders(mutex));
  }

  // The same without blocking: resolves true if notified, false on timeout, and rejects with
  // signal.reason if aborted; in every case only once this thread holds the mutex again.
  waitAsync(mutex, options) {
    const mutexHandle = heldMutexHandle(this, mutex);
    const { timeout, signal } = validateAsyncOptions(options);
    // The owner is this condition (whose cancelPendingWaits() cancels the wait); the mutex stays
    // reachable while the wait is pending through `interpret`, which the addon's record holds.
    return waitAsync(
      this,
      (record) => native.conditionWaitAsync(handleOf(this), mutexHandle, record),
      { timeout, signal },
      (settlement) => outcome(settlement, CONDITION, mutex, relockHolders(mutex)),
      false,
    );
  }

  // Wakes the longest waiter; returns the number woken (0 or 1). In sharedMemory(): posts one
  // notification for the waits of every process that began before it (up to one per wait),
  // returning 1, or 0 if nobody waits.
  notifyOne() {
    if (noWaiters(this.#word)) return 0;
    return native.conditionNotifyOne(handleOf(this));
  }

  // Wakes every waiter (moving them onto the mutex's queue while it is held); returns how many.
  // In sharedMemory(): one notification for each wait of every living process, returning how
  // many (the waits of processes that died are taken out of the count first).
  notifyAll() {
    if (noWaiters(this.#word)) return 0;
    return native.conditionNotifyAll(handleOf(this));
  }
}

definePrimitive(Condition, layout, ['waitAsync']);
definePlaceable(Condition, (memory, byteOffset) => new Condition(memory, byteOffset));

// The round enters both notifies' calls into the addon on a condition of this thread's own whose
// word says waiters may be queued: the addon finds nobody and clears it.
const prime = primer(() => {
  const condition = new Condition(new SharedArrayBuffer(WORDS * 4), 0);
  const word = wordsOf(condition);
  return () => {
    Atomics.store(word, 0, MAY_HAVE_WAITERS);
    condition.notifyOne();
    Atomics.store(word, 0, MAY_HAVE_WAITERS);
    condition.notifyAll();
  };
});

module.exports = { Condition };
