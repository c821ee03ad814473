'use strict';
// LockManager: named locks with the Web Locks API (request, query), plus a blocking lock() and a
// tryLock() for workers, over one lock table (./lock_table.js). `locks` is the process's own
// manager, whose table every thread of the process shares (./process_table.js);
// `new LockManager(path)` keeps its table in a file that every process opening the path shares.
const { invalidArgType } = require('../errors');
const { readProperty } = require('../property');
const { validateTimeout } = require('../validate');
const { validateSignal, isAborted, reasonOf } = require('../signals');
const { rejectingMethods } = require('../promise_form');
const { defineDisposal } = require('../guard');
const { MODE, RECORD, MAX_NAME_UNITS } = require('./table_layout');
const { validateInteger } = require('../validate');
const { waitForGrant, waitForGrantBlocking } = require('./lock_waits');
const { openFileTable } = require('./file_table');
const { openProcessTable } = require('./process_table');
const { notSupported, stolenError, tableFull, nameTooLong, selfDeadlock, badCallback } = require('./named_lock_errors');

const MODES = { exclusive: MODE.EXCLUSIVE, shared: MODE.SHARED };

// The lock a request's callback receives. `ownerDied`: the name's holder before this one ended
// (its thread or process) while holding it; `deadOwner` then says whose it was.
class Lock {
  #name;
  #mode;
  #deadOwner;

  constructor(name, mode, deadOwner) {
    this.#name = name;
    this.#mode = mode;
    this.#deadOwner = deadOwner;
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

  constructor(name, mode, deadOwner, release) {
    super(name, mode, deadOwner);
    this.#release = release;
  }

  unlock() {
    const release = this.#release;
    if (release === undefined) return;
    this.#release = undefined;
    release();
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

function validateName(name) {
  // WebIDL's DOMString: any value becomes its string (a Symbol throws a TypeError).
  const text = typeof name === 'string' ? name : `${name}`;
  if (text.startsWith('-')) throw notSupported('Lock names starting with "-" are reserved');
  if (text.length > MAX_NAME_UNITS) throw nameTooLong(text);
  return text;
}

function validateMode(mode, name) {
  if (mode === undefined) return 'exclusive';
  if (mode !== 'exclusive' && mode !== 'shared') {
    throw invalidArgType(name, '"exclusive" or "shared"', mode);
  }
  return mode;
}

// The options of request(), lock() and tryLock(), checked as the specification orders it.
function validateOptions(options, allowed) {
  if (options === undefined || options === null) return { mode: 'exclusive', ifAvailable: false, steal: false, signal: undefined, timeout: Infinity };
  if (typeof options !== 'object') throw invalidArgType('options', 'an object', options);
  const read = (key) => (allowed.includes(key) ? readProperty(options, key, 'options') : undefined);
  const mode = validateMode(read('mode'), 'options.mode');
  const ifAvailable = Boolean(read('ifAvailable'));
  const steal = Boolean(read('steal'));
  const signal = validateSignal(read('signal'));
  const timeoutValue = read('timeout');
  const timeout = timeoutValue === undefined ? Infinity : validateTimeout(timeoutValue, 'options.timeout');
  if (steal && ifAvailable) throw notSupported('The "steal" and "ifAvailable" options cannot be used together');
  if (steal && mode !== 'exclusive') throw notSupported('The "steal" option may only be used with "exclusive" locks');
  if (signal !== undefined && (steal || ifAvailable)) {
    throw notSupported('The "signal" option cannot be used with "steal" or "ifAvailable"');
  }
  if (timeout !== Infinity && (steal || ifAvailable)) {
    throw notSupported('The "timeout" option cannot be used with "steal" or "ifAvailable"');
  }
  return { mode, ifAvailable, steal, signal, timeout };
}

const REQUEST_OPTIONS = ['mode', 'ifAvailable', 'steal', 'signal', 'timeout'];
const LOCK_OPTIONS = ['mode', 'timeout'];
const TRY_LOCK_OPTIONS = ['mode'];

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
  const lock = new Lock(name, modeName, deadOwnerOf(table, record));
  await undefined;
  try {
    const result = callback(lock);
    return isThenable(result) ? await settledOrStolen(table, record, name, result) : result;
  } finally {
    table.stolenHere[record] = undefined;
    if (close(table, record)) throw stolenError(name); // eslint-disable-line no-unsafe-finally
  }
}

function settledOrStolen(table, record, name, result) {
  return new Promise((resolve, reject) => {
    table.stolenHere[record] = () => reject(stolenError(name));
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
    if (callback === undefined) {
      callback = options;
      options = undefined;
    }
    name = validateName(name);
    if (typeof callback !== 'function') throw badCallback(callback);
    const { mode, ifAvailable, steal, signal, timeout } = validateOptions(options, REQUEST_OPTIONS);
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
    });
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
