'use strict';
const { Mutex, AsyncLock } = require('./mutex');
const { TimeoutError, OwnerDiedError } = require('./errors');
const { Condition } = require('./condition');
const { Latch } = require('./latch');
const { Once } = require('./once');
const { Barrier } = require('./barrier');
const { Semaphore } = require('./semaphore');
const { RWLock } = require('./rwlock');
const futex = require('./futex');
const native = require('./native');
const { inspect, watchdog } = require('./inspect');
const { sharedMemory } = require('./shared_region');
const { LockManager, Lock } = require('./named_locks/lock_manager');
const { locks } = require('./named_locks/process_locks');
// Requires node-postgres only when a PostgresLockManager is made.
const { PostgresLockManager } = require('./named_locks/postgres/postgres_lock_manager');

// The shared-memory layouts, as the addon defines them (see addon/primitives/*.h).
const layouts = Object.freeze({
  mutex: Object.freeze({ ...native.mutexLayout }),
  latch: Object.freeze({ ...native.latchLayout }),
  once: Object.freeze({ ...native.onceLayout }),
  barrier: Object.freeze({ ...native.barrierLayout }),
  condition: Object.freeze({ ...native.conditionLayout }),
  semaphore: Object.freeze({ ...native.semaphoreLayout }),
  rwlock: Object.freeze({ ...native.rwlockLayout }),
});

// Only names, in one object literal: that is what lets Node (cjs-module-lexer) see them as the
// named exports of lib/index.mjs without running this file.
module.exports = {
  Mutex,
  AsyncLock,
  TimeoutError,
  OwnerDiedError,
  futex,
  Latch,
  Once,
  Barrier,
  Condition,
  Semaphore,
  RWLock,
  inspect,
  watchdog,
  layouts,
  sharedMemory,
  locks,
  LockManager,
  Lock,
  PostgresLockManager,
};
