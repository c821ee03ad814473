'use strict';
// Every error parklock throws carries a `code`; argument errors use Node's own codes and classes.
const { isProxy } = require('node:util').types;

// value.constructor, or undefined where reading it fails (a getter, a Proxy up the prototype chain).
function constructorOf(value) {
  try {
    return value.constructor;
  } catch {
    return undefined;
  }
}

// The string name of a function, or undefined; never runs a getter.
function nameOf(fn) {
  if (typeof fn !== 'function' || isProxy(fn)) return undefined;
  const descriptor = Object.getOwnPropertyDescriptor(fn, 'name');
  return descriptor !== undefined && typeof descriptor.value === 'string' ? descriptor.value : undefined;
}

// Describing a value must not throw: it runs while reporting a bad argument, which may be a
// revoked Proxy or an object whose getters throw.
function describe(value) {
  if (value === null) return 'null';
  if (isProxy(value)) return 'a Proxy';
  if (typeof value === 'function') return `function ${nameOf(value) || '<anonymous>'}`;
  if (typeof value === 'object') {
    const name = nameOf(constructorOf(value));
    return name ? `an instance of ${name}` : 'an object';
  }
  if (typeof value === 'string') return `type string (${JSON.stringify(value.slice(0, 28))})`;
  return `type ${typeof value} (${String(value)})`;
}

function withCode(error, code) {
  Object.defineProperty(error, 'code', { value: code, enumerable: true, writable: true, configurable: true });
  return error;
}

function invalidArgType(name, expected, actual) {
  return withCode(
    new TypeError(`The "${name}" argument must be ${expected}. Received ${describe(actual)}`),
    'ERR_INVALID_ARG_TYPE',
  );
}

function outOfRange(name, range, actual) {
  return withCode(
    new RangeError(`The value of "${name}" is out of range. It must be ${range}. Received ${String(actual)}`),
    'ERR_OUT_OF_RANGE',
  );
}

function lockError(code, message) {
  return withCode(new Error(message), code);
}

class TimeoutError extends Error {
  constructor(message = 'The operation timed out') {
    super(message);
    this.name = 'TimeoutError';
    withCode(this, 'ERR_PARKLOCK_TIMEOUT');
  }
}

// The ended holder as a message names it: its Node threadId, and its process where that is
// another one or the threadId is unknown.
function holderName({ threadId, pid }) {
  const thread = threadId === null ? 'a thread' : `thread ${threadId}`;
  if (pid === null) return `${thread} of another process`;
  return threadId !== null && pid === process.pid ? thread : `${thread} of process ${pid}`;
}

// The lock was acquired, but the thread that held it before ended while holding it (terminated,
// exited, crashed, or its code returned; in sharedMemory(), its process ended, SIGKILL included):
// what the lock guards may be half-updated. `guard` holds the lock for the catcher, who repairs
// the data and then calls error.guard.unlock(); from then on the lock is an ordinary one again:
// parklock never leaves a lock unusable for want of a repair. `threadId` is the ended owner's
// Node threadId (null if it was not a Node thread of this process, or is unknown); `pid` its
// process's pid (this process's for a lock in a SharedArrayBuffer; null if unknown). A null
// `guard`: a Once's initializer, whose previous run ended with its thread, is about to run again
// (it receives this error).
class OwnerDiedError extends Error {
  constructor(what, guard, holder) {
    const who = holderName(holder);
    super(
      guard === null
        ? `The previous run of this ${what}'s initializer (${who}) ended with its thread before ` +
            'completing; it runs again now: repair what it left half-done'
        : `The previous owner of this ${what} (${who}) ended while holding it; the lock is now ` +
            'held through error.guard: repair the data it guards, then unlock it',
    );
    this.name = 'OwnerDiedError';
    withCode(this, 'ERR_PARKLOCK_OWNER_DIED');
    this.guard = guard;
    this.threadId = holder.threadId;
    this.pid = holder.pid;
  }
}

// A blocking acquisition closed a cycle of threads each blocked waiting for a lock the next one
// holds, and this thread is the one that gives up (addon/lot/waits_for.h): it must now release what it
// holds, so that the others proceed. `cycle` starts with this thread: each step waits for the
// lock `waitsFor` (its kind and address, as inspect() reports them), which the next step's thread
// holds; the last step's lock is held by the first step's thread.
function deadlockError(steps) {
  const cycle = steps.map(({ threadId, kind, address }) => ({
    threadId,
    waitsFor: { kind, address },
  }));
  const who = (step) => (step.threadId === null ? 'a non-Node thread' : `thread ${step.threadId}`);
  const story = cycle
    .map((step, i) => {
      const next = cycle[(i + 1) % cycle.length];
      return `${who(step)} waits for ${step.waitsFor.kind} ${step.waitsFor.address}, held by ${who(next)}`;
    })
    .join('; ');
  const error = lockError(
    'ERR_PARKLOCK_DEADLOCK',
    `Deadlock: ${story}. This thread gave up its wait; release the locks it holds so that the ` +
      'others can proceed, and take locks in one order everywhere',
  );
  error.cycle = cycle;
  return error;
}

function corrupt(what) {
  return lockError(
    'ERR_PARKLOCK_CORRUPT',
    `The ${what} word holds a value parklock never writes; the memory was overwritten by other code`,
  );
}

// The addon's words are in a sharedMemory() file that was truncated or overwritten while mapped
// (addon/across_processes/shared_region.h, Integrity): the same error as the addon throws when a call begins.
function regionLost() {
  return lockError(
    'ERR_PARKLOCK_REGION_LOST',
    'The file of this shared memory was truncated or overwritten while mapped: its locks can no longer be trusted',
  );
}

// A Condition in sharedMemory() found no room to count one more wait, in its word or in its
// region's ledger (addon/across_processes/registration_ledger.h), even after taking out the waits of processes
// that died.
function tooManyWaiters() {
  return lockError(
    'ERR_PARKLOCK_TOO_MANY_WAITERS',
    'No room to count another wait on this Condition in sharedMemory(): it counts at most 1023 ' +
      'waits at once, of every process together, and its region\'s ledger has no free entry',
  );
}

module.exports = {
  invalidArgType,
  outOfRange,
  lockError,
  corrupt,
  regionLost,
  tooManyWaiters,
  deadlockError,
  TimeoutError,
  OwnerDiedError,
  holderName,
  withCode,
};
