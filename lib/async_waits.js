'use strict';
// The JavaScript half of asynchronous waits, shared by every primitive.
//
// Each wait hands the addon a record, `{ settle, owner }`, which it keeps while the wait is
// pending and settles on this thread through `onSettle(record, settlement)`, called by the
// thread's one threadsafe function (it keeps the event loop alive exactly while a wait is pending).
// A wait that queues gets a handle (< 0); timeouts and aborts cancel it. native.cancel(handle)
// either removes the wait and returns how it ended (CANCELLED: it rejects now; anything else was
// already given and stands, e.g. a notified condition wait re-locking its mutex), or finds its
// wake-up on the way: the addon then passes on what it gave (a lock handed over) and settles the
// wait as CANCELLED, which rejects then.
const native = require('./native');
const { TimeoutError, lockError } = require('./errors');
const { isAborted, reasonOf, listen } = require('./signals');
const { joinEnvironment } = require('./copies');
const { traceQueued } = require('./diagnostics');

const { settled } = native;
let pending = 0; // waits of this copy of lib/ that are queued in the addon

// The same in every copy of lib/ (./copies.js): whichever copy initialised the addon, each
// record settles itself.
function onSettle(record, settlement) {
  record.settle(settlement);
}

// Any JS function: a thread blocked in a synchronous wait calls it now and then, and the call
// failing is how it learns that worker.terminate() was called.
function probe() {}

function noop() {}

const threadId = joinEnvironment(native, onSettle, probe);

// setTimeout fires at once for delays beyond 2^31-1 ms, so longer timeouts are chained.
const MAX_TIMER_DELAY = 0x7fffffff;
function startTimer(ms, fire) {
  const timer = { handle: undefined };
  const arm = (remaining) => {
    timer.handle = setTimeout(
      remaining > MAX_TIMER_DELAY ? () => arm(remaining - MAX_TIMER_DELAY) : fire,
      Math.min(remaining, MAX_TIMER_DELAY),
    );
  };
  arm(ms);
  return timer;
}

// The waits of this thread queued through each primitive object (the `owner` of waitAsync): a
// doubly linked list of their records, headed by a sentinel, for cancelPendingWaits(). A wait is
// linked when it queues and unlinked when it settles: a queued wait looks its list up once, in a
// WeakMap, and linking and unlinking cost no hashing. Waits that settle without queuing (the fast
// paths) are never linked.
const queuedWaits = new WeakMap();

function queuedWaitsOf(owner) {
  let head = queuedWaits.get(owner);
  if (head === undefined) {
    head = { prev: null, next: null, size: 0 };
    head.prev = head;
    head.next = head;
    queuedWaits.set(owner, head);
  }
  return head;
}

function unlink(record) {
  if (record.next === null) return;
  record.prev.next = record.next;
  record.next.prev = record.prev;
  record.prev = null;
  record.next = null;
  record.head.size -= 1;
}

// Rejects every wait of this thread queued through `owner` and still pending, oldest first, as
// its abort would (what it was already given stands, per the addon's rules), with `reason`
// (default: an Error with code ERR_PARKLOCK_CANCELLED); returns how many it cancelled.
function cancelPendingWaits(owner, reason) {
  const head = queuedWaits.get(owner);
  if (head === undefined || head.size === 0) return 0;
  const why =
    reason === undefined
      ? lockError(
          'ERR_PARKLOCK_CANCELLED',
          'The wait was cancelled by cancelPendingWaits() on the primitive it waited on',
        )
      : reason;
  const records = [];
  for (let record = head.next; record !== head; record = record.next) records.push(record);
  for (const record of records) unlink(record);
  let count = 0;
  let failure;
  let failed = false;
  for (const record of records) {
    try {
      if (record.cancel(why)) count += 1;
    } catch (error) {
      if (!failed) failure = error;
      failed = true;
    }
  }
  if (failed) throw failure;
  return count;
}

// How many waits of this thread queued through `owner` are pending (for tests).
function pendingWaitCount(owner) {
  return queuedWaits.get(owner)?.size ?? 0;
}

// Runs an asynchronous wait. `begin(record)` calls the addon, which returns a settlement (> 0) at
// once, or the queued wait's handle (< 0); `interpret(settlement)` turns a settlement into the
// Promise's value (or throws).
// A wait cancelled by its timeout rejects with a TimeoutError, unless `timedOutValue` is given:
// then it resolves to that (futex.waitAsync resolves 'timed-out', Condition#waitAsync false).
// `owner` is kept reachable while the wait is pending, and with it the shared memory the addon
// is waiting on; it is the object whose cancelPendingWaits() cancels the wait once it queued.
//
// Throws, rather than rejects, what the signal throws (its getters, its addEventListener): the
// Promise forms turn that into a rejection (./promise_form.js). Every such step runs before
// begin(), because a throw after it would leave the wait queued in the addon, to take a lock (or
// permits) later for nobody.
function waitAsync(owner, begin, { timeout, signal }, interpret, timedOutValue) {
  let cancelled = false;
  let reason; // why it was cancelled (an abort reason may be any value, undefined included)
  let queued; // the wait's handle while it is queued in the addon
  // prev, next, head: its place in queuedWaits while it is queued; cancel: for
  // cancelPendingWaits().
  const record = { settle: noop, owner, prev: null, next: null, head: null, cancel: undefined };
  // Takes the queued wait out of the addon; settles it now unless its wake-up is on the way.
  const cancelQueued = () => {
    const now = native.cancel(queued);
    if (now !== undefined) record.settle(now);
  };
  // Returns whether it cancelled the wait (false: it was cancelled already). Before the wait has
  // its handle, only marks it: the handle's arrival cancels it (below).
  const cancel = (why) => {
    if (cancelled) return false;
    cancelled = true;
    reason = why;
    if (queued !== undefined) cancelQueued();
    return true;
  };
  let stopListening = noop;
  if (signal !== undefined) {
    if (isAborted(signal)) return Promise.reject(reasonOf(signal));
    stopListening = listen(signal, () => cancel(reasonOf(signal)));
    // A signal whose addEventListener calls the listener at once aborted before anything queued.
    if (cancelled) return Promise.reject(reason);
  }
  let now;
  try {
    now = begin(record);
  } catch (error) {
    stopListening();
    throw error;
  }
  if (now > 0) {
    stopListening();
    try {
      return Promise.resolve(interpret(now));
    } catch (error) {
      return Promise.reject(error);
    }
  }
  return new Promise((resolve, reject) => {
    let timer;
    const traced = traceQueued(owner);
    record.settle = (settlement) => {
      if (queued === undefined) return;
      queued = undefined;
      unlink(record);
      if (traced !== undefined) traced(settlement);
      pending -= 1;
      if (timer !== undefined) clearTimeout(timer.handle);
      stopListening();
      if (settlement === settled.CANCELLED) {
        if (reason instanceof TimeoutError && timedOutValue !== undefined) resolve(timedOutValue);
        else reject(reason);
        return;
      }
      try {
        resolve(interpret(settlement));
      } catch (error) {
        reject(error);
      }
    };
    queued = now;
    pending += 1;
    const head = queuedWaitsOf(owner);
    const last = head.prev;
    record.cancel = cancel;
    record.head = head;
    record.prev = last;
    record.next = head;
    last.next = record;
    head.prev = record;
    head.size += 1;
    // Cancelled while queuing, before it had its handle (a 'parklock:wait:start' subscriber, run by
    // traceQueued() above, aborted its signal): the addon has it queued, so cancel it there now.
    if (cancelled) {
      cancelQueued();
      return;
    }
    if (timeout !== Infinity) {
      timer = startTimer(timeout, () => cancel(new TimeoutError(`Timed out after ${timeout} ms`)));
    }
  });
}


module.exports = {
  threadId,
  settled,
  waitAsync,
  cancelPendingWaits,
  pendingWaitCount,
  pendingCount: () => pending,
};
