'use strict';
// Contention telemetry through node:diagnostics_channel.
//
// A wait that has to go to the addon (the lock was taken, the permits were not there, ...) is a
// contended wait; uncontended operations never get here. Two channels carry them:
//
//   parklock:wait:start  { primitive, blocking, threadId, startTime }
//   parklock:wait:end    the same object, plus `duration` (ms) and `outcome`
//
// `outcome` is 'acquired' (the wait got what it waited for), 'timed-out', 'cancelled' (a Promise
// wait's timeout or abort), 'owner-died', 'deadlock', 'not-equal' (futex), 'interrupted' (the
// thread is being terminated) or 'error' (a corrupt word, a misuse). Nothing is built or
// published while neither channel has a subscriber: the check is two property reads per
// contended wait.
const dc = require('node:diagnostics_channel');
const { threadId } = require('node:worker_threads');
const { traceName } = require('./outcomes');

const startChannel = dc.channel('parklock:wait:start');
const endChannel = dc.channel('parklock:wait:end');


function tracing() {
  return startChannel.hasSubscribers || endChannel.hasSubscribers;
}

function begin(primitive, blocking) {
  const event = { primitive, blocking, threadId, startTime: performance.now() };
  if (startChannel.hasSubscribers) startChannel.publish(event);
  return event;
}

function finish(event, settlement) {
  event.duration = performance.now() - event.startTime;
  event.outcome = traceName(settlement);
  if (endChannel.hasSubscribers) endChannel.publish(event);
}

// Runs the blocking contended wait `wait()`, which returns a settlement. Small enough to inline
// into every slow path: the try/finally of a traced wait lives in traceBlockingNow().
function traceBlocking(primitive, wait) {
  return tracing() ? traceBlockingNow(primitive, wait) : wait();
}

function traceBlockingNow(primitive, wait) {
  const event = begin(primitive, true);
  let settlement = null; // stays null if wait() throws: an 'error'
  try {
    settlement = wait();
    return settlement;
  } finally {
    finish(event, settlement);
  }
}

// What diagnostics call the primitive a Promise wait is on: its class, or 'futex' for a futex wait
// on a bare Int32Array.
function primitiveOf(owner) {
  if (owner instanceof Int32Array) return 'futex';
  const name = owner && owner.constructor && owner.constructor.name;
  return typeof name === 'string' ? name.toLowerCase() : 'unknown';
}

// A Promise wait on `owner` (what ./async_waits.js keeps alive for it) that has just been queued
// in the addon: returns the function to call with its settlement when it ends, or undefined when
// nobody listens (then nothing else is done: not even naming the primitive).
function traceQueued(owner) {
  if (!tracing()) return undefined;
  const event = begin(primitiveOf(owner), false);
  return (settlement) => finish(event, settlement);
}

module.exports = { tracing, traceBlocking, traceBlockingNow, traceQueued };
