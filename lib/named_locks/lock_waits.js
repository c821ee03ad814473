'use strict';
// Waiting for a named lock to be granted. A pending request waits on its own WAKE Semaphore, which
// its grant releases, and so does its becoming the first waiter of its name. The first waiter
// also looks out for the end of the name's holders: each time a wait of FIRST_WAITER_SLICE_MS
// passes, it takes their LIVENESS Mutexes over where their threads or processes have ended
// (LockTable#freeEndedHolders), which frees what they held and tells the next holder. The
// others wait in slices of OTHER_SLICE_MS, only so that a wake-up lost to a table rebuilt after a
// thread ended mid-change costs a moment rather than forever.
const { performance } = require('node:perf_hooks');
const { TimeoutError } = require('../errors');
const { selfDeadlock, namedDeadlock } = require('./named_lock_errors');

const FIRST_WAITER_SLICE_MS = 20;
const OTHER_SLICE_MS = 1000;
// A blocked waiter that is not the first looks again this often, for a deadlock it closes.
const BLOCKED_SLICE_MS = 100;

function deadlineOf(timeout) {
  return timeout === Infinity ? Infinity : performance.now() + timeout;
}

function remainingMs(deadline) {
  return deadline === Infinity ? Infinity : deadline - performance.now();
}

// Takes a request that gives up out of the table. Returns true if it had been granted meanwhile:
// then it holds the name and the caller goes on as if it had not given up.
function withdraw(table, record) {
  table.enter();
  try {
    if (table.acknowledgeGrant(record)) return true;
    table.close(record);
  } finally {
    table.leave();
  }
  return false;
}

// Under the table's Mutex: whether `record` holds its name now; else how long to wait before
// looking again. `timedOut`: the last wait ran its whole slice, so the first waiter checks the
// holders. `blocking`: a holder of this thread in the way could never leave (a blocking lock(),
// while a Promise request of this thread holds the name): refused as a deadlock.
function look(table, record, timedOut, blocking, name) {
  table.enter();
  try {
    if (table.claim(record)) return 0;
    const first = table.isFirstWaiter(record);
    if (first && timedOut) {
      table.freeEndedHolders(record);
      if (table.claim(record)) return 0;
    }
    if (!blocking) return first ? FIRST_WAITER_SLICE_MS : OTHER_SLICE_MS;
    if (first && table.blockedByThisThread(record)) throw selfDeadlock(name);
    const cycle = timedOut ? table.deadlockCycle(record) : null;
    if (cycle !== null) throw namedDeadlock(cycle);
    return first ? FIRST_WAITER_SLICE_MS : BLOCKED_SLICE_MS;
  } finally {
    table.leave();
  }
}

// Resolves once `record` is granted; rejects with a TimeoutError after `timeout` ms or with the
// signal's reason, having taken the request out of the table.
async function waitForGrant(table, record, timeout, signal) {
  const deadline = deadlineOf(timeout);
  const wake = table.wake(record);
  let timedOut = false;
  for (;;) {
    const slice = look(table, record, timedOut, false);
    if (slice === 0) return;
    const left = remainingMs(deadline);
    if (left <= 0) {
      if (withdraw(table, record)) return;
      throw new TimeoutError('The lock request timed out');
    }
    try {
      await wake.acquireAsync(1, { timeout: Math.min(left, slice), signal });
      timedOut = false;
    } catch (error) {
      if (!(error instanceof TimeoutError)) {
        if (withdraw(table, record)) return;
        throw error;
      }
      timedOut = true;
    }
  }
}

// The blocking form of waitForGrant(), for lock(): throws a TimeoutError after `timeout` ms.
function waitForGrantBlocking(table, record, timeout, name) {
  const deadline = deadlineOf(timeout);
  const wake = table.wake(record);
  let timedOut = false;
  for (;;) {
    let slice;
    try {
      slice = look(table, record, timedOut, true, name);
      if (slice === 0) return;
      const left = remainingMs(deadline);
      if (left <= 0) throw new TimeoutError('The lock request timed out');
      timedOut = !wake.tryAcquire(1, Math.min(left, slice));
    } catch (error) {
      if (withdraw(table, record)) return;
      throw error;
    }
  }
}

module.exports = { waitForGrant, waitForGrantBlocking, withdraw };
