'use strict';
// futex: wait/notify on any Int32Array element of shared memory, like Atomics.wait/notify, but
// with a Promise form that keeps its thread alive and can be cancelled, and blocking waits that
// worker.terminate() interrupts. Its waiters are parklock's own (addon/primitives/futex.h): Atomics.notify
// does not wake them and futex.notify does not wake Atomics.wait.
const native = require('./native');
const { traceBlocking } = require('./diagnostics');
const { waitAsync: startWaitAsync } = require('./async_waits');
const { vocabulary, outcome } = require('./outcomes');
const { invalidArgType, outOfRange } = require('./errors');
const { validateTimeout, validateAsyncOptions } = require('./validate');
const { rejectingThrows } = require('./promise_form');
const { sharedInt32Length } = require('./shared_memory');

function validateWord(array, index) {
  const length = sharedInt32Length(array);
  if (length < 0) throw invalidArgType('int32Array', 'an Int32Array on a SharedArrayBuffer', array);
  if (typeof index !== 'number') throw invalidArgType('index', 'of type number', index);
  if (!Number.isInteger(index) || index < 0 || index >= length) {
    throw outOfRange('index', `an integer from 0 to ${length - 1}`, index);
  }
}

function validateExpected(expected) {
  if (typeof expected !== 'number') throw invalidArgType('expected', 'of type number', expected);
  return expected | 0;
}

const FUTEX = vocabulary({ what: 'futex', acquired: 'ok', notEqual: 'not-equal', timedOut: 'timed-out' });
const result = (settlement) => outcome(settlement, FUTEX);

// Blocks while array[index] === expected, until notified or timeoutMs passes.
function wait(array, index, expected, timeoutMs = Infinity) {
  validateWord(array, index);
  const value = validateExpected(expected);
  validateTimeout(timeoutMs, 'timeoutMs');
  if (Atomics.load(array, index) !== value) return 'not-equal';
  return result(traceBlocking('futex', () => native.futexWait(array, index, value, timeoutMs)));
}

// Resolves when notified ('ok'), at once if the value differs ('not-equal'), or 'timed-out';
// rejects with signal.reason if aborted.
const waitAsync = rejectingThrows(function waitAsync(array, index, expected, options) {
  validateWord(array, index);
  const value = validateExpected(expected);
  const { timeout, signal } = validateAsyncOptions(options);
  if (Atomics.load(array, index) !== value) return Promise.resolve('not-equal');
  return startWaitAsync(
    array,
    (record) => native.futexWaitAsync(array, index, value, record),
    { timeout, signal },
    result,
    'timed-out',
  );
});

// Wakes up to `count` waiters (oldest first); returns how many were woken.
function notify(array, index, count = Infinity) {
  validateWord(array, index);
  if (typeof count !== 'number') throw invalidArgType('count', 'of type number', count);
  if (Number.isNaN(count) || count < 0) throw outOfRange('count', '>= 0 (or Infinity)', count);
  return native.futexNotify(array, index, count);
}

module.exports = { wait, waitAsync, notify };
