'use strict';
// What executeLocked() and executeShared() of a lock (Mutex, RWLock) are: the lock taken for fn
// and given back however fn ends. An owner that ended holding the lock does not fail the call, as
// Windows' WAIT_ABANDONED does not fail the wait: fn runs holding the lock, is told through its
// argument, and the process is warned once, so that code with no handling for it still reports
// it. Failing instead (the OwnerDiedError of lock() and lockAsync()) would leave the caller
// holding the lock, and a caller that did not catch it would end holding it in turn: one killed
// holder would fail every later run. The lock is released after fn as after any other run, so the
// next acquirer gets an ordinary lock and is not told again.
const { OwnerDiedError, holderName } = require('./errors');

// What fn receives when the previous holder gave the lock back.
const CLEAN = Object.freeze({ ownerDied: false });

// Waits for `acquiring` (a Promise of a guard), runs fn (sync or async) holding the lock with
// { ownerDied, threadId?, pid? }, and always releases it; returns fn's result. `method` names the
// call in the warning ('Mutex.executeLocked()').
async function runLocked(acquiring, fn, method) {
  let guard;
  let report = CLEAN;
  try {
    guard = await acquiring;
  } catch (error) {
    if (!(error instanceof OwnerDiedError) || error.guard === null) throw error;
    guard = error.guard;
    report = Object.freeze({ ownerDied: true, threadId: error.threadId, pid: error.pid });
    warnOwnerDied(error, method);
  }
  try {
    return await fn(report);
  } finally {
    guard.unlock();
  }
}

// Runs fn holding a lock that the caller has just taken at once, and always releases it by
// `release` (called on `lock`); resolves to fn's result. The lock was free, so its previous owner
// gave it back: fn is told { ownerDied: false }. fn runs in a later microtask, as it does after a
// wait, never inside the call that took the lock: code after executeLocked() runs first either
// way. This path has no async function and awaits nothing a sync fn returns: a plain value
// releases the lock in the same microtask as fn ran.
function runTaken(lock, release, fn) {
  return RESOLVED.then(() => callHolding(lock, release, fn));
}

const RESOLVED = Promise.resolve();

function callHolding(lock, release, fn) {
  let result;
  try {
    result = fn(CLEAN);
  } catch (error) {
    release.call(lock);
    throw error;
  }
  // Only an object or a function can be a thenable; anything else is fn's result as it is.
  if (result === null || (typeof result !== 'object' && typeof result !== 'function')) {
    release.call(lock);
    return result;
  }
  // What `await result` would do, its reads of `constructor` and `then` included.
  let settling;
  try {
    settling = Promise.resolve(result);
  } catch (error) {
    release.call(lock);
    throw error;
  }
  return settling.then(
    (value) => {
      release.call(lock);
      return value;
    },
    (error) => {
      release.call(lock);
      throw error;
    },
  );
}

function warnOwnerDied(error, method) {
  process.emitWarning(
    `${method}: the previous owner of the lock (${holderName(error)}) ended while holding it; ` +
      'fn runs holding the lock, with { ownerDied: true } as its argument',
    {
      type: 'OwnerDiedWarning',
      code: error.code,
      detail:
        'fn may repair what the ended owner left half-updated when its argument says ownerDied; ' +
        'the lock is released after fn as usual, and the next acquirer is not told again.',
    },
  );
}

module.exports = { runLocked, runTaken, CLEAN };
