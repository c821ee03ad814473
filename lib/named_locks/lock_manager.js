'use strict';
// LockManager: named locks with the Web Locks API (request, query), plus a blocking lock() and a
// tryLock() for workers, over one lock table (./lock_table.js). `locks` is the process's own
// manager, whose table every thread of the process shares (./process_table.js);
// `new LockManager(path)` keeps its table in a file that every process opening the path shares.
const { invalidArgType } = require('../errors');
const { readProperty } = require('../property');
const { isAborted, reasonOf } = require('../signals');
const { rejectingMethods } = require('../promise_form');
const { defineDisposal } = require('../guard');
const { MODE, RECORD, STATE } = require('./table_layout');
const { validateInteger } = require('../validate');
const { validateName, validateOptions, validateRequest, LOCK_OPTIONS, TRY_LOCK_OPTIONS } = require('./request_options');
const { waitForGrant, waitForGrantBlocking } = require('./lock_waits');
const { openFileTable } = require('./file_table');
const { openProcessTable } = require('./process_table');
const { stolenError, tableFull, selfDeadlock } = require('./named_lock_errors');

const MODES = { exclusive: MODE.EXCLUSIVE, shared: MODE.SHARED };

// How often a held lock whose `signal` was read looks whether another thread or process stole it:
// such a steal changes the record in the table, and nothing wakes this thread for it.
const STOLEN_POLL_MS = 50;

// Ends a Lock's hold: lock.#settle(), kept off the Lock that users see.
let settleLock;

// The lock a request's callback receives. `ownerDied`: the name's holder before this one ended
// (its thread or process) while holding it; `deadOwner` then says whose it was. `signal` aborts
// once the name is stolen from this holder; its AbortController is made only when it is read, so
// that a request whose callback never looks costs nothing more.
class Lock {
  #name;
  #mode;
  #deadOwner;
  #controller;
  #table;
  #record;

  // `record` of `table`: the request that holds the name, whose state says whether a steal took it;
  // the table is forgotten once the hold ends.
  constructor(name, mode, deadOwner, table, record) {
    this.#name = name;
    this.#mode = mode;
    this.#deadOwner = deadOwner;
    this.#table = table;
    this.#record = record;
  }

  get signal() {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#table !== undefined) this.#watchForSteal();
    }
    return this.#controller.signal;
  }

  static {
    settleLock = (lock, stolen) => lock.#settle(stolen);
  }

  // Called when the name is found stolen, or (undefined) when the hold ends: the signal aborts in
  // the first case only, and stops being watched in both.
  #settle(stolen) {
    this.#table = undefined;
    if (stolen !== undefined && this.#controller !== undefined && !this.#controller.signal.aborted) {
      this.#controller.abort(stolen);
    }
  }

  #watchForSteal() {
    const timer = setInterval(() => {
      if (this.#table === undefined) clearInterval(timer);
      else if (this.#table.field(this.#record, RECORD.STATE) === STATE.STOLEN) this.#settle(stolenError(this.#name));
    }, STOLEN_POLL_MS);
    timer.unref();
  }

  get name() {
    return this.#name;
  }

  get mode() {
    return this.#mode;
  }

  get ownerDied() {
    return this.#deadOwner !== null;
  }

  // { pid, threadId } of the holder that ended, or null.
  get deadOwner() {
    return this.#deadOwner;
  }
}

// What lock() and tryLock() return: the Lock's fields, and unlock() (or `using`), which releases
// once. A release finds out whether a { steal: true } request took the name away meanwhile: it
// then throws the AbortError a request() would have rejected with.
class NamedLockGuard extends Lock {
  #release;

  constructor(name, mode, deadOwner, release, table, record) {
    super(name, mode, deadOwner, table, record);
    this.#release = release;
  }

  unlock() {
    const release = this.#release;
    if (release === undefined) return;
    this.#release = undefined;
    try {
      release();
    } catch (stolen) {
      settleLock(this, stolen);
      throw stolen;
    }
    settleLock(this, undefined);
  }

  get released() {
    return this.#release === undefined;
  }
}

defineDisposal(NamedLockGuard, 'unlock');

function deadOwnerOf(table, record) {
  if (table.field(record, RECORD.DIED) === 0) return null;
  return { pid: table.field(record, RECORD.DEAD_PID), threadId: table.field(record, RECORD.DEAD_THREAD) };
}


// Opens a request for `name` under the table's Mutex. Returns the record, or -1 where ifAvailable
// found the name taken.
function open(table, name, mode, { ifAvailable = false, steal = false, blocking = false } = {}) {
  let stolen = [];
  table.enter();
  try {
    const slot = table.slotFor(name);
    if (slot < 0) throw tableFull('names');
    if (ifAvailable && !table.availableNow(slot, mode)) {
      table.freeEndedHoldersOf(slot);
      if (!table.availableNow(slot, mode)) {
        table.forget(slot);
        return -1;
      }
    }
    if (blocking && table.heldHereAgainst(slot, mode)) {
      table.forget(slot);
      throw selfDeadlock(name);
    }
    const record = table.open(slot, mode, blocking);
    if (record < 0) {
      table.forget(slot);
      throw tableFull('requests');
    }
    if (steal) stolen = table.steal(record);
    return record;
  } finally {
    table.leave();
    for (const taken of stolen) table.stolenHere[taken]?.();
  }
}

// Ends a request this thread holds or gave up; true if a steal had taken it.
function close(table, record) {
  let stolen;
  table.enter();
  try {
    stolen = table.close(record);
  } finally {
    table.leave();
  }
  return stolen;
}

// Runs the callback (in a later microtask, as the specification has it) holding the request,
// releases it however the callback ends, and settles with the callback's result, or with the
// AbortError of a steal: at once for a steal by this thread while the callback's promise is
// pending, else when the callback settles. A callback that returns at once costs no Promise of
// its own, which the uncontended request() is measured by.
async function runHolding(table, record, name, modeName, callback) {
  const lock = new Lock(name, modeName, deadOwnerOf(table, record), table, record);
  await undefined;
  try {
    const result = callback(lock);
    return isThenable(result) ? await settledOrStolen(table, record, lock, result) : result;
  } finally {
    table.stolenHere[record] = undefined;
    const stolen = close(table, record) ? stolenError(name) : undefined;
    settleLock(lock, stolen);
    if (stolen !== undefined) throw stolen; // eslint-disable-line no-unsafe-finally
  }
}

function settledOrStolen(table, record, lock, result) {
  return new Promise((resolve, reject) => {
    table.stolenHere[record] = () => {
      const stolen = stolenError(lock.name);
      settleLock(lock, stolen);
      reject(stolen);
    };
    Promise.resolve(result).then(resolve, reject);
  });
}

// Whether the callback returned something to wait for; reading `then` may run a getter that throws,
// which the caller reports as the callback's failure.
function isThenable(value) {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof value.then === 'function';
}

// Passed by ./process_locks.js alone: the manager of the process's own table.
const PROCESS = Symbol('the process');

function validateManagerOptions(options) {
  if (options === undefined) return { mode: 0o600 };
  if (options === null || typeof options !== 'object') throw invalidArgType('options', 'an object', options);
  const mode = readProperty(options, 'mode', 'options');
  return { mode: mode === undefined ? 0o600 : validateInteger(mode, 'options.mode', 0, 0o777) };
}

let tableOf;

class LockManager {
  #table;
  #path;

  // new LockManager(path, { mode = 0o600 }): the lock file at `path`, created (mode `mode`, never
  // through a symbolic link) if it does not exist, shared by every process that opens the path.
  constructor(path, options) {
    if (path === PROCESS) {
      this.#path = null;
      return;
    }
    const { mode } = validateManagerOptions(options);
    this.#table = openFileTable(path, mode);
    this.#path = typeof path === 'string' ? path : String(path);
  }

  static {
    tableOf = (manager) => {
      if (manager === null || typeof manager !== 'object' || !(#path in manager)) {
        throw invalidArgType('this', 'a LockManager', manager);
      }
      return (manager.#table ??= openProcessTable());
    };
  }

  // The lock file's path; null for `locks`, the process's own manager.
  get path() {
    return this.#path;
  }

  // The Web Locks request(): request(name, callback) or request(name, options, callback).
  request(name, options, callback) {
    const request = validateRequest(name, options, callback);
    const { mode, ifAvailable, steal, signal, timeout } = request;
    name = request.name;
    callback = request.callback;
    if (isAborted(signal)) return Promise.reject(reasonOf(signal));
    const table = tableOf(this);
    const modeValue = MODES[mode];
    const record = open(table, name, modeValue, { ifAvailable, steal });
    if (record < 0) return new Promise((resolve) => resolve(callback(null)));
    if (table.acknowledgeGrant(record)) return runHolding(table, record, name, mode, callback);
    return waitForGrant(table, record, timeout, signal).then(() => runHolding(table, record, name, mode, callback));
  }

  // Blocks this thread until it holds `name`; returns a guard. Options: mode, timeout (ms; then a
  // TimeoutError having taken nothing).
  lock(name, options) {
    name = validateName(name);
    const { mode, timeout } = validateOptions(options, LOCK_OPTIONS);
    const table = tableOf(this);
    const record = open(table, name, MODES[mode], { blocking: true });
    if (!table.acknowledgeGrant(record)) waitForGrantBlocking(table, record, timeout, name);
    return this.#guard(table, record, name, mode);
  }

  // A guard if `name` can be had now in `mode`, else null; never waits.
  tryLock(name, options) {
    name = validateName(name);
    const { mode } = validateOptions(options, TRY_LOCK_OPTIONS);
    const table = tableOf(this);
    const record = open(table, name, MODES[mode], { ifAvailable: true });
    if (record < 0) return null;
    table.acknowledgeGrant(record);
    return this.#guard(table, record, name, mode);
  }

  #guard(table, record, name, mode) {
    return new NamedLockGuard(name, mode, deadOwnerOf(table, record), () => {
      if (close(table, record)) throw stolenError(name);
    }, table, record);
  }

  // { held, pending }: every request of every thread (and for a file, of every process), each as
  // { name, mode, clientId, threadId, pid }. Requests of threads and processes that have ended are
  // freed first.
  query() {
    const table = tableOf(this);
    table.enter();
    try {
      table.sweep();
      return Promise.resolve(table.snapshot());
    } finally {
      table.leave();
    }
  }
}

rejectingMethods(LockManager.prototype, 'request', 'query');

module.exports = { LockManager, Lock, NamedLockGuard, PROCESS };
