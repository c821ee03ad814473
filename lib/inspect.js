'use strict';
// inspect() and watchdog(): who holds what and who waits for it, across every thread of the
// process, from the addon's parking lot (binding/diagnostics_binding.cpp).
//
// inspect() is a snapshot: each queue is read at one instant, different queues at slightly
// different ones, and by the time it returns waiters may have moved on. It lists only primitives
// that have waiters; an uncontended lock, held or not, is invisible to it.
const native = require('./native');
const { instanceAt } = require('./handles');
const { validateFunction } = require('./validate');
const { invalidArgType, outOfRange } = require('./errors');
const { describeNamedWait } = require('./named_locks/wait_names');

const { SHARED_REQUEST, UPGRADE_REQUEST } = native.rwlockLayout;

// What a waiter asks for, in the primitive's terms, where that says more than "the lock".
function requestOf(kind, request) {
  if (kind === 'rwlock') {
    if (request === SHARED_REQUEST) return 'read';
    if (request === UPGRADE_REQUEST) return 'upgrade';
    return request > 0 ? 'write' : 'upgradable';
  }
  if (kind === 'semaphore') return request;
  return undefined;
}

// [{ kind, address, primitive, holder, waiters: [{ threadId, blocking, waitedMs, request }] }],
// one entry per primitive with waiters, each waiter list in queue order (oldest first).
// `primitive` is this thread's object for that memory, if it has used one on contention (another
// thread's objects cannot be named here); `holder` is the Node threadId of the thread holding a
// Mutex, or an RWLock's write lock or upgradable read lock, or running a Once's initializer (null
// if none, or not a Node thread of this process). A primitive in sharedMemory() also has
// `holderProcess`: the pid of the holder's process (null if none, or no longer known). Waiters
// are this process's only. A wait for a named lock (locks, LockManager) has kind 'named lock',
// the `name` and `mode` asked for, `path` (null for `locks`) and `holders` [{ pid, threadId,
// mode }].
function inspect() {
  const byAddress = new Map();
  for (const waiter of native.snapshot()) {
    let entry = byAddress.get(waiter.address);
    if (entry === undefined) {
      entry = {
        kind: waiter.kind,
        address: waiter.address,
        primitive: instanceAt(waiter.address) ?? null,
        holder: waiter.holder,
        ...('holderProcess' in waiter ? { holderProcess: waiter.holderProcess } : {}),
        waiters: [],
      };
      byAddress.set(waiter.address, entry);
    }
    const request = requestOf(waiter.kind, waiter.request);
    entry.waiters.push({
      threadId: waiter.threadId,
      blocking: waiter.blocking,
      waitedMs: waiter.waitedMs,
      ...(request === undefined ? {} : { request }),
    });
  }
  return [...byAddress.values()].map(describeNamedWait);
}

// The inspect() entries whose waiters have waited at least `thresholdMs`, with only those waiters.
function stalled(thresholdMs) {
  const entries = [];
  for (const entry of inspect()) {
    const waiters = entry.waiters.filter((w) => w.waitedMs >= thresholdMs);
    if (waiters.length > 0) entries.push({ ...entry, waiters });
  }
  return entries;
}

function heldBy({ holder, holderProcess }) {
  if (holderProcess === undefined || holderProcess === null || holderProcess === process.pid) {
    return holder === null ? '' : `, held by thread ${holder}`;
  }
  return `, held by process ${holderProcess}`;
}

function describe(entries, thresholdMs) {
  const lines = [`parklock: waits longer than ${thresholdMs} ms:`];
  for (const entry of entries) {
    const holder = heldBy(entry);
    const what = entry.name === undefined ? entry.address : `${JSON.stringify(entry.name)} (${entry.mode})`;
    lines.push(`  ${entry.kind} ${what}${holder}:`);
    for (const w of entry.waiters) {
      const how = w.blocking ? 'blocked' : 'awaiting';
      const what = w.request === undefined ? '' : ` (${w.request})`;
      lines.push(`    thread ${w.threadId} ${how}${what} for ${Math.round(w.waitedMs)} ms`);
    }
  }
  return lines.join('\n');
}

function reportAsWarning(entries, thresholdMs) {
  process.emitWarning(describe(entries, thresholdMs), { code: 'PARKLOCK_STALLED_WAIT' });
}

// Checks every `intervalMs` for waits longer than `thresholdMs` and calls
// onStall(entries, thresholdMs) with them (entries as inspect() gives them, with only the long
// waits); by default emits a process warning (code PARKLOCK_STALLED_WAIT) describing them. The
// timer does not keep the event loop alive. Returns { stop() }.
function watchdog({ thresholdMs = 1000, intervalMs, onStall = reportAsWarning } = {}) {
  if (typeof thresholdMs !== 'number') throw invalidArgType('thresholdMs', 'of type number', thresholdMs);
  if (!(thresholdMs >= 0) || thresholdMs === Infinity) {
    throw outOfRange('thresholdMs', 'a finite number >= 0', thresholdMs);
  }
  const interval = intervalMs === undefined ? Math.max(10, thresholdMs / 2) : intervalMs;
  if (typeof interval !== 'number') throw invalidArgType('intervalMs', 'of type number', interval);
  if (!(interval >= 1) || interval > 0x7fffffff) {
    throw outOfRange('intervalMs', 'a number from 1 to 2147483647', interval);
  }
  validateFunction(onStall, 'onStall');
  const timer = setInterval(() => {
    const entries = stalled(thresholdMs);
    if (entries.length > 0) onStall(entries, thresholdMs);
  }, interval);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

module.exports = { inspect, watchdog };
