'use strict';
// The control words a run shares between its coordinating thread and its workers: a start gate,
// a stop flag, the counter the lock protects, and a few scenario-specific words.
//
// Each word sits alone in a 64-byte slot. The protected counter is written on every critical
// section and the stop flag is read by every worker on every batch; on one cache line, each
// counter write would also evict every worker's copy of the stop flag and add coherence traffic
// that has nothing to do with the lock under test.

const SLOT_WORDS = 16; // Int32 words per 64-byte slot

const NAMES = [
  'READY', // workers that reached the start gate
  'GO', // 1 once the gate is open
  'STOP', // 1 when workers should finish their batch and report
  'COUNTER', // incremented with a plain (non-atomic) read and write inside the critical section
  'SINK', // the result of the busy work, written under the lock so it cannot be optimized away
  'TURN', // ping-pong: whose turn it is
  'ARRIVED', // condition benchmark: waiters that reached their wait
  'PASSED', // condition benchmark: waiters that went through the mutex after the notify
  'GENERATION', // condition benchmark: bumped by each notify round
  'RELEASE', // memory scenario: 1 when the lock holder may release
  'INSIDE', // semaphore scenario: threads inside the critical section right now
  'MEASURE', // named locks: 1 while the steady window is open (after the warm-up, before STOP)
];

const CONTROL = Object.freeze(
  Object.fromEntries(NAMES.map((name, slot) => [name, slot * SLOT_WORDS])),
);

function createControl() {
  return new SharedArrayBuffer(NAMES.length * SLOT_WORDS * 4);
}

function controlWords(buffer) {
  return new Int32Array(buffer);
}

module.exports = { CONTROL, createControl, controlWords };
