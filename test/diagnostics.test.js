'use strict';
// Who holds it, who waits: inspect(), watchdog(), the waiting/hasWaiters/holder getters, RWLock
// downgrade, and the diagnostics_channel events of contended waits.
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const dc = require('node:diagnostics_channel');
const { threadId } = require('node:worker_threads');
const { Mutex, RWLock, Semaphore, Condition, Latch, Barrier, inspect, watchdog } = require('../lib');
const { fixture, agentsPerTest, waitFor, withinLimit, assertClean, runWorkers } = require('./helpers');

const startAgent = agentsPerTest(fixture('agent.js'), (...mutexes) => ({ mutexes }));
const startRwAgent = agentsPerTest(fixture('rwlock_agent.js'), (lock) => ({ lock }));

function entryFor(primitive) {
  return inspect().find((entry) => entry.primitive === primitive);
}

describe('inspect()', () => {
  it('names the holder and every waiter, blocking and Promise, in queue order', async () => {
    const mutex = new Mutex();
    const holder = await startAgent(mutex);
    const blocked = await startAgent(mutex);
    await holder.call('lock');
    const pending = mutex.lockAsync();
    await waitFor(() => mutex.waiting === 1, 'the lockAsync to queue');
    await withinLimit(blocked.send('lock').started, 'the worker to start locking');
    await waitFor(() => mutex.waiting === 2, 'the worker to park');

    const entry = entryFor(mutex);
    assert.ok(entry, 'the mutex is listed, as this thread\'s object');
    assert.equal(entry.kind, 'mutex');
    assert.equal(entry.holder, holder.nodeThreadId);
    assert.equal(mutex.holder, holder.nodeThreadId);
    assert.match(entry.address, /^0x[0-9a-f]+$/);
    assert.deepEqual(
      entry.waiters.map((w) => [w.threadId, w.blocking]),
      [
        [threadId, false],
        [blocked.nodeThreadId, true],
      ],
    );
    for (const w of entry.waiters) assert.ok(w.waitedMs >= 0 && w.waitedMs < 60_000);
    assert.equal(mutex.hasWaiters, true);

    await holder.call('unlock');
    (await pending).unlock();
    await blocked.call('unlock');
    assert.equal(mutex.waiting, 0);
    assert.equal(mutex.hasWaiters, false);
    assert.equal(mutex.holder, null);
    assert.equal(entryFor(mutex), undefined, 'no waiters, not listed');
    assertClean(mutex);
  });

  it('reports RWLock modes and semaphore requests', async () => {
    const lock = new RWLock();
    const writer = await startRwAgent(lock);
    await writer.call('lock');
    assert.equal(lock.writer, writer.nodeThreadId);
    const read = lock.lockSharedAsync();
    const write = lock.lockAsync();
    await waitFor(() => lock.waiting === 2, 'both to queue');
    assert.deepEqual(entryFor(lock).waiters.map((w) => w.request), ['read', 'write']);
    await writer.call('unlock');
    (await read).unlock();
    (await write).unlock();
    assert.equal(lock.writer, null);

    // An upgradable reader queued behind the worker's upgradable hold, then this thread's upgrade
    // waiting for the worker's read hold: one entry, held by the upgrader.
    await writer.call('lockUpgradable');
    assert.equal(lock.upgrader, writer.nodeThreadId);
    const upgradable = lock.lockUpgradableAsync();
    await waitFor(() => lock.waiting === 1, 'the upgradable reader to queue');
    assert.deepEqual(entryFor(lock).waiters.map((w) => w.request), ['upgradable']);
    assert.equal(entryFor(lock).holder, writer.nodeThreadId);
    await writer.call('unlockUpgradable');
    const mine = await upgradable;
    await writer.call('lockShared');
    const upgrade = lock.upgradeAsync();
    assert.equal(lock.waiting, 1);
    assert.deepEqual(entryFor(lock).waiters.map((w) => w.request), ['upgrade']);
    assert.equal(entryFor(lock).holder, threadId);
    await writer.call('unlockShared');
    await upgrade;
    mine.unlock();
    assert.equal(lock.isLocked, false);

    const semaphore = new Semaphore(0);
    const acquiring = semaphore.acquireAsync(3);
    assert.equal(semaphore.waiting, 1);
    assert.deepEqual(entryFor(semaphore).waiters.map((w) => w.request), [3]);
    semaphore.release(3);
    await acquiring;
    assert.equal(semaphore.hasWaiters, false);
  });

  it('lists latch, barrier and condition waiters under their own kinds', async () => {
    const latch = new Latch(1);
    const barrier = new Barrier(2);
    const condition = new Condition();
    const mutex = new Mutex();
    const latchWait = latch.waitAsync();
    const barrierWait = barrier.waitAsync();
    mutex.lock();
    const conditionWait = condition.waitAsync(mutex);
    const kinds = inspect()
      .filter((e) => [latch, barrier, condition].includes(e.primitive))
      .map((e) => e.kind)
      .sort();
    assert.deepEqual(kinds, ['barrier', 'condition', 'latch']);
    assert.equal(latch.waiting, 1);
    assert.equal(barrier.waiting, 1);
    assert.equal(condition.waiting, 1);
    latch.countDown();
    barrier.wait();
    condition.notifyOne();
    await Promise.all([latchWait, barrierWait, conditionWait]);
    mutex.unlock();
  });

  it('stays consistent under load: no waiter listed twice, no crash', async () => {
    const buffer = new SharedArrayBuffer(64);
    let snapshots = 0;
    let running = true;
    const watching = (async () => {
      while (running) {
        for (const entry of inspect()) {
          const seen = new Set();
          for (const w of entry.waiters) {
            const key = `${w.threadId}:${w.blocking}:${w.waitedMs}`;
            assert.ok(!seen.has(key), 'a waiter listed twice');
            seen.add(key);
          }
        }
        snapshots++;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const results = await runWorkers(
      fixture('deadlock_free.js'),
      [0, 1, 2].map(() => ({ buffer, iterations: 20_000 })),
      { limit: 60_000 },
    );
    running = false;
    await watching;
    assert.ok(snapshots > 10, `${snapshots} snapshots`);
    for (const r of results) assert.equal(r.deadlocks, 0);
  });
});

describe('watchdog()', () => {
  it('reports waits longer than the threshold, and stops', async () => {
    const mutex = new Mutex();
    const holder = await startAgent(mutex);
    await holder.call('lock');
    const pending = mutex.lockAsync();
    const reports = [];
    const dog = watchdog({ thresholdMs: 30, intervalMs: 10, onStall: (entries) => reports.push(entries) });
    try {
      await waitFor(() => reports.length > 0, 'a report');
    } finally {
      dog.stop();
    }
    const entry = reports[0].find((e) => e.primitive === mutex);
    assert.ok(entry);
    assert.equal(entry.holder, holder.nodeThreadId);
    assert.ok(entry.waiters[0].waitedMs >= 30);
    await holder.call('unlock');
    (await pending).unlock();
  });

  it('warns by default, and refuses bad options', async () => {
    const mutex = new Mutex();
    const holder = await startAgent(mutex);
    await holder.call('lock');
    const pending = mutex.lockAsync();
    const warned = new Promise((resolve) => process.once('warning', resolve));
    const dog = watchdog({ thresholdMs: 20, intervalMs: 5 });
    const warning = await withinLimit(warned, 'the warning');
    dog.stop();
    assert.equal(warning.code, 'PARKLOCK_STALLED_WAIT');
    assert.match(warning.message, /mutex 0x[0-9a-f]+, held by thread \d+/);
    await holder.call('unlock');
    (await pending).unlock();

    assert.throws(() => watchdog({ thresholdMs: -1 }), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => watchdog({ thresholdMs: '5' }), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => watchdog({ intervalMs: 0 }), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => watchdog({ onStall: 5 }), { code: 'ERR_INVALID_ARG_TYPE' });
  });
});

describe('RWLock#downgrade', () => {
  it('turns the write lock into a read lock and lets queued readers in, not writers', async () => {
    const lock = new RWLock();
    const reader = await startRwAgent(lock);
    lock.lock();
    await withinLimit(reader.send('lockShared').started, 'the reader to start');
    await waitFor(() => lock.waiting === 1, 'the reader to park');
    const writing = lock.lockAsync();
    await waitFor(() => lock.waiting === 2, 'the writer to queue');
    lock.downgrade();
    await reader.call('state'); // the reader got in beside this thread
    await waitFor(() => lock.readers === 2, 'both readers in');
    assert.equal(lock.isWriteLocked, false);
    assert.equal(lock.waiting, 1, 'the writer still waits');
    assert.throws(() => lock.downgrade(), { code: 'ERR_PARKLOCK_NOT_OWNER' });
    lock.unlockShared();
    await reader.call('unlockShared');
    (await writing).unlock();
    assert.equal(lock.isLocked, false);
  });
});

describe('diagnostics_channel', () => {
  it('publishes one start and one end per contended wait, none for uncontended ones', async () => {
    const events = { start: [], end: [] };
    const onStart = (event) => events.start.push(event);
    const onEnd = (event) => events.end.push({ ...event });
    dc.subscribe('parklock:wait:start', onStart);
    dc.subscribe('parklock:wait:end', onEnd);
    try {
      const mutex = new Mutex();
      mutex.lock();
      mutex.unlock(); // uncontended: nothing
      assert.equal(events.start.length, 0);

      const holder = await startAgent(mutex);
      await holder.call('lock');
      assert.equal(mutex.tryLock(5), false); // blocking, times out
      const pending = mutex.lockAsync(); // Promise, acquires
      await waitFor(() => mutex.waiting === 1, 'the lockAsync to queue');
      await holder.call('unlock');
      (await pending).unlock();
    } finally {
      dc.unsubscribe('parklock:wait:start', onStart);
      dc.unsubscribe('parklock:wait:end', onEnd);
    }
    assert.equal(events.start.length, 2);
    assert.deepEqual(
      events.end.map((e) => [e.primitive, e.blocking, e.outcome]),
      [
        ['mutex', true, 'timed-out'],
        ['mutex', false, 'acquired'],
      ],
    );
    for (const e of events.end) {
      assert.equal(e.threadId, threadId);
      assert.ok(e.duration >= 0);
    }
    assert.ok(events.end[0].duration >= 4, 'the blocking wait lasted its timeout');
  });
});
