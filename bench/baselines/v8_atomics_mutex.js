'use strict';
// A thin adapter over V8's built-in Atomics.Mutex (the "shared structs" proposal).
//
// Availability: only when node itself starts with --harmony-struct. On Node 20 (V8 11.3):
//   - `node --harmony-struct script.js` works; workers inherit the flag (V8 flags are
//     process-wide), even a Worker started with execArgv: [].
//   - NODE_OPTIONS=--harmony-struct is refused by node ("not allowed in NODE_OPTIONS").
//   - v8.setFlagsFromString('--harmony-struct') at run time is too late for the main thread's
//     context (Atomics.Mutex stays undefined there), though workers created afterwards get it.
//
// Sharing: an Atomics.Mutex lives in V8's shared heap. It is not placed in a SharedArrayBuffer;
// the object itself is sent to a worker (workerData or postMessage, alone or inside a shared
// struct) and the worker receives the very same mutex. So the "handle" below is the mutex object,
// and fromHandle() just wraps what the worker received.
//
// The API is callback-scoped: there is no separate lock()/unlock(), the lock is held exactly for
// the duration of the callback, and it is blocking (there is no async form on V8 11.3).

function isAvailable() {
  return typeof Atomics.Mutex === 'function';
}

function requireAvailable() {
  if (!isAvailable()) {
    throw new Error(
      'Atomics.Mutex is not available: start node with --harmony-struct ' +
        '(a command-line flag; NODE_OPTIONS does not accept it)');
  }
}

class V8AtomicsMutex {
  // A new, unlocked mutex. Send `.handle` to the workers that should share it.
  static create() {
    requireAvailable();
    return new V8AtomicsMutex(new Atomics.Mutex());
  }

  // Rebuilds the adapter from what a worker received through workerData or postMessage.
  static fromHandle(handle) {
    requireAvailable();
    return new V8AtomicsMutex(handle);
  }

  constructor(handle) {
    // The shared mutex object itself: what to put in workerData or postMessage.
    this.handle = handle;
  }

  // Blocks until the mutex is held, runs fn, releases it (also when fn throws); returns fn's
  // result.
  runLocked(fn) {
    return Atomics.Mutex.lock(this.handle, fn);
  }

  // Runs fn only if the mutex is free right now. Returns { success, value }. The value is
  // captured here because V8 11.3's tryLock returns only a boolean while later V8 versions
  // return an object; capturing it works the same with both.
  tryRunLocked(fn) {
    let value;
    const result = Atomics.Mutex.tryLock(this.handle, () => {
      value = fn();
    });
    const success = typeof result === 'boolean' ? result : Boolean(result && result.success);
    return { success, value };
  }
}

module.exports = { V8AtomicsMutex, isAvailable };
