'use strict';
// The errors of named locks. Those the Web Locks specification names are DOMExceptions of its
// names (NotSupportedError, AbortError), so that code written for navigator.locks catches them
// unchanged; parklock's own carry a `code`.
const { lockError, invalidArgType } = require('../errors');
const { MAX_NAME_UNITS, SLOTS, RECORDS } = require('./table_layout');

function notSupported(message) {
  return new DOMException(message, 'NotSupportedError');
}

function stolenError(name) {
  return new DOMException(`The lock "${name}" was stolen by a request with { steal: true }`, 'AbortError');
}

function tableFull(what) {
  const most = what === 'names' ? `${SLOTS} names held or waited for` : `${RECORDS} requests held or waiting`;
  return lockError('ERR_PARKLOCK_LOCK_TABLE_FULL', `The lock manager has room for ${most} at once, and they are all in use`);
}

function nameTooLong(name) {
  const error = new RangeError(
    `A lock name has at most ${MAX_NAME_UNITS} UTF-16 code units (at least ${MAX_NAME_UNITS} UTF-8 bytes); ` +
      `this one has ${name.length}`,
  );
  Object.defineProperty(error, 'code', { value: 'ERR_OUT_OF_RANGE', enumerable: true, writable: true, configurable: true });
  return error;
}

// `cause`: the region's own refusal, where its size was not a lock table's.
function notALockFile(path, cause) {
  const error = lockError(
    'ERR_PARKLOCK_NOT_A_LOCK_FILE',
    `The file is not a lock table of this version of parklock (a sharedMemory() region, or a lock file ` +
      `of another layout); remove it if no process uses it: ${path}`,
  );
  error.path = path;
  if (cause !== undefined) error.cause = cause;
  return error;
}

// Where regions are not built (../shared_region.js says why), there are no lock files either;
// `locks`, within one process, works everywhere.
function noLockFiles(cause) {
  const error = lockError(
    'ERR_PARKLOCK_UNSUPPORTED',
    `new LockManager(path) is not available on ${process.platform}: lock files are shared memory, ` +
      `which parklock maps only on Linux, macOS and Windows for now; locks (within one process) works here`,
  );
  error.cause = cause;
  return error;
}

function selfDeadlock(name) {
  return lockError(
    'ERR_PARKLOCK_DEADLOCK',
    `This thread already holds the lock "${name}" (through a request that has not released it); ` +
      'a blocking lock() of it would wait forever',
  );
}

// A blocking lock() closed a cycle of threads, each blocked for a name that the next holds (or
// waits ahead of it for), the last one's held by this thread: it gives up its wait.
function namedDeadlock(cycle) {
  const who = (step) => (step.pid === process.pid ? `thread ${step.threadId}` : `thread ${step.threadId} of process ${step.pid}`);
  const story = cycle
    .map((step, i) => `${who(step)} waits for "${step.waitsFor}", held by ${who(cycle[(i + 1) % cycle.length])}`)
    .join('; ');
  const error = lockError(
    'ERR_PARKLOCK_DEADLOCK',
    `Deadlock: ${story}. This thread gave up its wait; release the locks it holds so that the ` +
      'others can proceed, and take locks in one order everywhere',
  );
  error.cycle = cycle;
  return error;
}

function badCallback(callback) {
  return invalidArgType('callback', 'of type function', callback);
}

module.exports = { notSupported, stolenError, tableFull, nameTooLong, notALockFile, noLockFiles, selfDeadlock, namedDeadlock, badCallback };
