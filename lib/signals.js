'use strict';
// options.signal: an AbortSignal, or any object that behaves as one (a boolean `aborted`, a
// `reason`, and addEventListener / removeEventListener functions). Every use of a signal can run
// the caller's code (getters, Proxy traps, its own addEventListener), and so can throw: the
// Promise forms use it only before anything is queued natively, or where a throw cannot leave
// anything queued or held.
const { invalidArgType } = require('./errors');
const { readProperty, hasProperty } = require('./property');

const NAME = 'options.signal';

function isSignal(value, name) {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof readProperty(value, 'aborted', name) === 'boolean' &&
    hasProperty(value, 'reason', name) &&
    typeof readProperty(value, 'addEventListener', name) === 'function' &&
    typeof readProperty(value, 'removeEventListener', name) === 'function'
  );
}

// `value` if it is a signal (or undefined: no signal); throws ERR_INVALID_ARG_TYPE otherwise.
function validateSignal(value, name = NAME) {
  if (value !== undefined && !isSignal(value, name)) {
    throw invalidArgType(name, 'an instance of AbortSignal', value);
  }
  return value;
}

// Whether `signal` (a validated signal, or undefined) has aborted.
function isAborted(signal) {
  return signal !== undefined && readProperty(signal, 'aborted', NAME) === true;
}

// signal.reason, or, if reading it throws, what it threw: either way, what the aborted wait
// rejects with. Never throws, because it runs inside the signal's own event dispatch, where a
// throw would be reported as uncaught and the wait would never be cancelled.
function reasonOf(signal) {
  try {
    return readProperty(signal, 'reason', NAME);
  } catch (error) {
    return error;
  }
}

// Calls onAbort() when `signal` aborts; returns the function that stops listening. Throws what
// adding the listener throws. The function it returns never throws: it runs once the wait has
// settled, when a failure of removeEventListener could change nothing (the listener it leaves
// behind finds its wait settled and does nothing).
function listen(signal, onAbort) {
  const add = readProperty(signal, 'addEventListener', NAME);
  if (typeof add !== 'function') throw invalidArgType(NAME, 'an instance of AbortSignal', signal);
  Reflect.apply(add, signal, ['abort', onAbort, { once: true }]);
  return () => {
    try {
      Reflect.apply(readProperty(signal, 'removeEventListener', NAME), signal, ['abort', onAbort]);
    } catch {
      // See above: nothing is left to report it to.
    }
  };
}

module.exports = { validateSignal, isAborted, reasonOf, listen };
