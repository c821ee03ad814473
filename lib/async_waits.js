'use strict';
// The JavaScript half of asynchronous waits, shared by every primitive.
//
// The addon settles each pending wait on this thread by calling `onSettle(id, settlement)` through
// the thread's one threadsafe function, which keeps the event loop alive exactly while a wait is
// pending. Here we map ids to Promises and implement timeouts and AbortSignal by cancelling in
// the addon: cancel() either removes the wait and returns how it ended (CANCELLED: we reject
// now; or what it had already been given, which stands: a notified condition wait whose timeout
// fires while it re-locks its mutex is still notified), or reports that its wake-up is already on
// the way, in which case the addon passes on what the wake-up gave (a lock handed over, say) and
// settles the wait as CANCELLED, and we reject then.
const { threadId: nodeThreadId } = require('node:worker_threads');
const native = require('./native');
const { TimeoutError } = require('./errors');

const { settled } = native;
const pending = new Map();
let nextId = 1;

function onSettle(id, settlement) {
  const wait = pending.get(id);
  if (wait === undefined) return;
  pending.delete(id);
  wait.settle(settlement);
}

// Any JS function: a thread blocked in a synchronous wait calls it now and then, and the call
// failing is how it learns that worker.terminate() was called.
function probe() {}

const threadId = native.init(onSettle, probe, nodeThreadId);

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

// Runs an asynchronous wait. `begin(id)` calls the addon, which returns a settlement at once or
// settled.PENDING; `interpret(settlement)` turns a settlement into the Promise's value (or throws).
// A wait cancelled by its timeout rejects with a TimeoutError, unless `timedOutValue` is given:
// then it resolves to that (futex.waitAsync resolves 'timed-out', Condition#waitAsync false).
// `owner` is kept reachable while the wait is pending, and with it the shared memory the addon
// is waiting on.
function waitAsync(owner, begin, { timeout, signal }, interpret, timedOutValue) {
  if (signal !== undefined && signal.aborted) return Promise.reject(signal.reason);
  const id = nextId++;
  const now = begin(id);
  if (now !== settled.PENDING) {
    try {
      return Promise.resolve(interpret(now));
    } catch (error) {
      return Promise.reject(error);
    }
  }
  return new Promise((resolve, reject) => {
    let timer;
    let reason;
    const onAbort = () => cancel(signal.reason);
    const settle = (settlement) => {
      if (timer !== undefined) clearTimeout(timer.handle);
      if (signal !== undefined) signal.removeEventListener('abort', onAbort);
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
    const cancel = (why) => {
      if (reason !== undefined || !pending.has(id)) return;
      reason = why;
      const now = native.cancel(id);
      if (now !== undefined) onSettle(id, now);
    };
    pending.set(id, { settle, owner });
    if (timeout !== Infinity) {
      timer = startTimer(timeout, () => cancel(new TimeoutError(`Timed out after ${timeout} ms`)));
    }
    if (signal !== undefined) signal.addEventListener('abort', onAbort, { once: true });
  });
}

module.exports = { threadId, settled, waitAsync, pendingCount: () => pending.size };
