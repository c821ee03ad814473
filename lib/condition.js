'use strict';
// Condition: a condition variable used with a Mutex (addon/condition.h). wait() releases the
// mutex, sleeps until notified, and returns holding it again. notifyAll() moves the waiters onto
// the mutex's queue instead of waking them all to fight over it. Notifying a condition nobody
// waits on stays in JavaScript.
const native = require('./native');
const { attach, defineLocation, defineSize } = require('./shared_memory');
const { settled, waitAsync, ownerDied } = require('./async_waits');
const { wordOf, isMutex } = require('./mutex');
const { validateTimeout, validateAsyncOptions } = require('./validate');
const { invalidArgType, lockError, corrupt } = require('./errors');
const { rejectingMethods } = require('./promise_form');

const layout = native.conditionLayout;
const { NO_WAITERS } = layout;

function heldMutexWord(mutex) {
  if (!isMutex(mutex)) throw invalidArgType('mutex', 'an instance of Mutex', mutex);
  if (!mutex.isHeldByCurrentThread) {
    throw lockError('ERR_PARKLOCK_NOT_OWNER', 'Condition wait requires the mutex to be held by this thread');
  }
  return wordOf(mutex);
}

// How a wait on `mutex` ended: true if notified, false if it timed out; throws otherwise.
function notified(settlement, mutex) {
  switch (settlement) {
    case settled.ACQUIRED:
      return true;
    case settled.TIMED_OUT:
      return false;
    case settled.OWNER_DIED:
      // Re-acquired, but from an owner that ended holding the mutex: the data needs repair.
      throw ownerDied('mutex', mutex);
    case settled.ALREADY_HELD:
      throw lockError(
        'ERR_PARKLOCK_DEADLOCK',
        'This thread cannot re-acquire the mutex: a pending lockAsync() of this thread was ' +
          'handed it while the thread was blocked in Condition#wait',
      );
    case settled.NOT_OWNER:
      throw lockError('ERR_PARKLOCK_NOT_OWNER', 'Condition wait requires the mutex to be held by this thread');
    default:
      throw corrupt('mutex or condition');
  }
}

class Condition {
  #word;

  constructor(...location) {
    const { buffer, byteOffset, words } = attach(location, layout);
    this.#word = words;
    defineLocation(this, { buffer, byteOffset });
  }

  // Releases `mutex` (held by this thread), blocks until notified or timeoutMs passes, and
  // re-acquires the mutex. true if notified, false on timeout; the mutex is held either way.
  wait(mutex, timeoutMs = Infinity) {
    const mutexWord = heldMutexWord(mutex);
    validateTimeout(timeoutMs, 'timeoutMs');
    return notified(native.conditionWait(this.#word, 0, mutexWord, 0, timeoutMs), mutex);
  }

  // The same without blocking: resolves true if notified, false on timeout, and rejects with
  // signal.reason if aborted; in every case only once this thread holds the mutex again.
  waitAsync(mutex, options) {
    const mutexWord = heldMutexWord(mutex);
    const { timeout, signal } = validateAsyncOptions(options);
    return waitAsync(
      [this, mutex],
      (id) => native.conditionWaitAsync(this.#word, 0, mutexWord, 0, id),
      { timeout, signal },
      (settlement) => notified(settlement, mutex),
      false,
    );
  }

  // Wakes the longest waiter; returns the number woken (0 or 1).
  notifyOne() {
    if (Atomics.load(this.#word, 0) === NO_WAITERS) return 0;
    return native.conditionNotifyOne(this.#word, 0);
  }

  // Wakes every waiter (moving them onto the mutex's queue while it is held); returns how many.
  notifyAll() {
    if (Atomics.load(this.#word, 0) === NO_WAITERS) return 0;
    return native.conditionNotifyAll(this.#word, 0);
  }
}

defineSize(Condition, layout);
rejectingMethods(Condition.prototype, 'waitAsync');

module.exports = { Condition };
