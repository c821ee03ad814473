'use strict';
// The package evaluated twice in one environment (require.cache entries deleted, as test runners
// with a fresh module registry per file do): both copies' waits settle, each in its own copy,
// and a lock released through one copy wakes a waiter of the other.
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const first = require('../lib');
const { withinLimit, exitIfKeptAlive } = require('./helpers');

exitIfKeptAlive();

// A second copy of every module of lib/ (the addon itself stays cached, as Node keeps it).
function loadSecondCopy() {
  const libDir = path.join(__dirname, '..', 'lib') + path.sep;
  const saved = Object.keys(require.cache).filter((key) => key.startsWith(libDir) && key.endsWith('.js'));
  const originals = saved.map((key) => [key, require.cache[key]]);
  for (const key of saved) delete require.cache[key];
  try {
    return require('../lib');
  } finally {
    for (const [key, module] of originals) require.cache[key] = module;
  }
}

describe('a second copy of the package in one environment', () => {
  it('waits of both copies, pending at once, each settle in their own copy', async () => {
    const second = loadSecondCopy();
    assert.notEqual(second.Mutex, first.Mutex, 'a distinct copy was loaded');
    const a = new first.Mutex();
    const b = new second.Mutex();
    const holdA = a.lock();
    const holdB = b.lock();
    const waitA = a.lockAsync();
    const waitB = b.lockAsync();
    holdB.unlock();
    (await withinLimit(waitB, "the second copy's wait")).unlock();
    holdA.unlock();
    (await withinLimit(waitA, "the first copy's wait")).unlock();
    assert.equal(a.isLocked, false);
    assert.equal(b.isLocked, false);
  });

  it('a lock released through one copy wakes a waiter of the other', async () => {
    const second = loadSecondCopy();
    const m = new first.Mutex();
    const alias = new second.Mutex(m);
    const holder = m.lock();
    assert.equal(alias.isHeldByCurrentThread, true, 'both copies agree on the thread id');
    const waiting = alias.lockAsync();
    const semaphore = new second.Semaphore(0);
    const acquiring = new first.Semaphore(semaphore).acquireAsync();
    holder.unlock();
    (await withinLimit(waiting, "the second copy's lockAsync")).unlock();
    semaphore.release();
    await withinLimit(acquiring, "the first copy's acquireAsync");
    assert.equal(m.isLocked, false);
  });
});
