'use strict';
// The lock implementations every scenario is run against, behind one small interface, so that a
// scenario or worker names an implementation by id and never special-cases it beyond the API
// shape (lock/unlock, callback-scoped runLocked, or Promise-based).
//
//   create()            in the thread that sets a run up: a new unlocked lock; returns what to
//                       send to workers (structured-clonable: workerData or postMessage)
//   openSync(shared)    in any thread: the lock's blocking form, an object with either
//                       lock()/unlock() or runLocked(fn) (Atomics.Mutex is callback-scoped only)
//   openAsync(shared)   the Promise form: { lockAsync() -> Promise<token>, unlock(token),
//                       executeLocked(fn) }; `token` is whatever the lock needs back to release
//   admits              how many threads may be inside at once: absent for a lock (one), a number
//                       for a semaphore's permits, 'all' for the read side of a read-write lock.
//                       The hammer workers pick the critical section that checks that bound.
//
// The handles returned are the libraries' own objects or one-line arrow adapters around them;
// TurboFan inlines those, and every implementation goes through the same shape of adapter, so
// the comparison stays fair.

const { DrepperMutex } = require('../baselines/drepper_mutex');
const { V8BlogAsyncLock } = require('../baselines/v8_blog_async_lock');
const { V8AtomicsMutex, isAvailable: atomicsMutexAvailable } = require('../baselines/v8_atomics_mutex');
const { JsSemaphore } = require('../baselines/js_semaphore');
const { JsRwLock } = require('../baselines/js_rwlock');

// Every SharedArrayBuffer-based lock gets a buffer of its own with the word at LOCK_OFFSET: 64
// bytes of padding on each side keep the lock word off the cache lines of any other allocation
// (the control words of a run, a neighbour's counter), which would otherwise add false sharing
// to some runs and not others.
const LOCK_BUFFER_BYTES = 192;
const LOCK_OFFSET = 64;

function paddedBuffer() {
  return { buffer: new SharedArrayBuffer(LOCK_BUFFER_BYTES), byteOffset: LOCK_OFFSET };
}

// Loaded lazily: a process that benchmarks only the JavaScript baselines never loads the addon.
const parklock = () => require('../../lib');

// The semaphore scenario's permits unless the case names others: fewer than the workers, so that
// most acquisitions contend.
const SEMAPHORE_PERMITS = 4;

// A semaphore class with init(buffer, byteOffset, permits), acquire() and release(), behind the
// lock interface the hammer workers use. create({ permits }) picks the permits of one case; what
// it returns carries them, and the hammer workers check that bound (workers/sync_hammer.js).
// `promise`: the hammer takes each permit with `await acquireAsync()` instead.
function semaphoreImplementation(name, classOf, { promise = false } = {}) {
  return {
    label: `${name}${promise ? ', acquireAsync' : ''}`,
    sync: true,
    async: false,
    crossThread: true,
    admits: SEMAPHORE_PERMITS,
    promiseHammer: promise,
    create({ permits = SEMAPHORE_PERMITS } = {}) {
      const location = paddedBuffer();
      classOf().init(location.buffer, location.byteOffset, permits);
      return { ...location, permits };
    },
    openSync({ buffer, byteOffset }) {
      const semaphore = new (classOf())(buffer, byteOffset);
      return promise
        ? { lockAsync: () => semaphore.acquireAsync(), unlock: () => semaphore.release() }
        : { lock: () => semaphore.acquire(), unlock: () => semaphore.release() };
    },
  };
}

const IMPLEMENTATIONS = {
  parklock: {
    label: 'parklock Mutex',
    sync: true,
    async: true,
    crossThread: true,
    create: paddedBuffer,
    openSync: ({ buffer, byteOffset }) => new (parklock().Mutex)(buffer, byteOffset),
    openAsync({ buffer, byteOffset }) {
      const mutex = new (parklock().Mutex)(buffer, byteOffset);
      // mutex.unlock() rather than guard.unlock(): the guard only adds a "released already?"
      // check on top of it.
      return {
        lockAsync: () => mutex.lockAsync(),
        unlock: () => mutex.unlock(),
        executeLocked: (fn) => mutex.executeLocked(fn),
      };
    },
  },
  drepper: {
    label: 'pure-JS 3-state (Drepper)',
    sync: true,
    async: false,
    crossThread: true,
    create: paddedBuffer,
    openSync: ({ buffer, byteOffset }) => new DrepperMutex(buffer, byteOffset),
  },
  'v8-blog': {
    label: 'V8-blog AsyncLock (waitAsync)',
    sync: true,
    async: true,
    crossThread: true,
    create: paddedBuffer,
    openSync: ({ buffer, byteOffset }) => new V8BlogAsyncLock(buffer, byteOffset),
    openAsync({ buffer, byteOffset }) {
      const lock = new V8BlogAsyncLock(buffer, byteOffset);
      return {
        lockAsync: () => lock.lockAsync(),
        unlock: () => lock.unlock(),
        executeLocked: (fn) => lock.executeLocked(fn),
      };
    },
  },
  'v8-atomics': {
    label: 'V8 Atomics.Mutex',
    sync: true,
    async: false,
    crossThread: true,
    // Atomics.Mutex exists only in a process started with `node --harmony-struct`; the runner
    // starts such a child for it (see run.js).
    needsHarmony: true,
    available: () => (atomicsMutexAvailable() ? null : 'needs node --harmony-struct'),
    // The mutex object itself is what crosses to workers (it lives in V8's shared heap).
    create: () => V8AtomicsMutex.create().handle,
    openSync: (handle) => V8AtomicsMutex.fromHandle(handle),
  },
  'parklock-read': {
    label: 'parklock RWLock, read side',
    sync: true,
    async: false,
    crossThread: true,
    admits: 'all',
    create: paddedBuffer,
    openSync({ buffer, byteOffset }) {
      const rwlock = new (parklock().RWLock)(buffer, byteOffset);
      return { lock: () => rwlock.lockShared(), unlock: () => rwlock.unlockShared() };
    },
  },
  'parklock-write': {
    label: 'parklock RWLock, write side',
    sync: true,
    async: false,
    crossThread: true,
    create: paddedBuffer,
    openSync({ buffer, byteOffset }) {
      const rwlock = new (parklock().RWLock)(buffer, byteOffset);
      return { lock: () => rwlock.lock(), unlock: () => rwlock.unlock() };
    },
  },
  // The hand-written baseline's write side (baselines/js_rwlock.js).
  'js-rwlock-write': {
    label: 'pure-JS reader-writer lock, write side',
    sync: true,
    async: false,
    crossThread: true,
    create: paddedBuffer,
    openSync({ buffer, byteOffset }) {
      const rwlock = new JsRwLock(buffer, byteOffset);
      return { lock: () => rwlock.lock(), unlock: () => rwlock.unlock() };
    },
  },
  'parklock-semaphore': semaphoreImplementation('parklock Semaphore', () => parklock().Semaphore),
  'parklock-semaphore-async': semaphoreImplementation('parklock Semaphore',
    () => parklock().Semaphore, { promise: true }),
  'js-semaphore': semaphoreImplementation('pure-JS semaphore', () => JsSemaphore),
  'async-mutex': {
    label: 'async-mutex (npm)',
    sync: false,
    async: true,
    // A plain JavaScript object: it cannot be shared between threads at all.
    crossThread: false,
    available() {
      try {
        require.resolve('async-mutex');
        return null;
      } catch {
        return 'async-mutex is not installed (npm install --save-dev async-mutex)';
      }
    },
    create: () => null,
    openAsync() {
      const { Mutex } = require('async-mutex');
      const mutex = new Mutex();
      return {
        lockAsync: () => mutex.acquire(),
        unlock: (release) => release(),
        executeLocked: (fn) => mutex.runExclusive(fn),
      };
    },
  },
};

function implementation(id) {
  const impl = IMPLEMENTATIONS[id];
  if (impl === undefined) throw new Error(`unknown implementation ${id}`);
  return impl;
}

// null if `id` can run in this process, else why not.
function unavailableReason(id) {
  const impl = IMPLEMENTATIONS[id];
  return impl && impl.available ? impl.available() : null;
}

module.exports = { IMPLEMENTATIONS, implementation, unavailableReason, paddedBuffer };
