'use strict';
// An RWLock in sharedMemory(): one readers-writer lock for every process that opens the file.
// Writers stay alone and counts under the write lock exact across processes and worker threads,
// in blocking and Promise forms, with upgrades; a release in one process wakes waiters in
// another; a writer killed with SIGKILL is reported to the next acquirer in any process, and an
// upgradable holder's death releases its hold; waits that give up leave the lock to the others.
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { fork } = require('node:child_process');
const { Worker, threadId } = require('node:worker_threads');
const { sharedMemory, RWLock, inspect, TimeoutError } = require('../lib');
const native = require('../lib/native');
const { fixture, withinLimit, waitFor, exitIfKeptAlive, messageFrom, exited, removeTemporary } = require('./helpers');

exitIfKeptAlive();
const AGENT = fixture('region_rwlock_agent.js');
const { PARKED, DRAINING } = native.rwlockLayout;
const COUNTS = 64;
const STOP = 96;
let directory;
let serial = 0;

// A fresh region with its RWLock at byte 0 and the agents' counts at COUNTS.
function region() {
  const file = path.join(directory, `rwlock-${++serial}`);
  const memory = sharedMemory(file, { size: 128 });
  return {
    file,
    memory,
    rwlock: new RWLock(memory, 0),
    state: () => Atomics.load(new Int32Array(memory.buffer, 0, 1), 0),
    counts: new Int32Array(memory.buffer, COUNTS, 4),
  };
}

function agent(file, ...task) {
  return fork(AGENT, [file, ...task.map(String)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

const outcomeOf = (child) => messageFrom(child, (m) => m && m.outcome !== undefined);

// A fresh region whose RWLock a forked agent holds in `mode`, once it has reported so.
async function heldElsewhere(mode) {
  const fresh = region();
  const holder = agent(fresh.file, 'hold', mode);
  await withinLimit(messageFrom(holder, (m) => m === 'locked'), `the holder to take the ${mode} lock`);
  return { ...fresh, holder };
}

// How a Promise settled: { guard } or { error }.
const settled = (promise) => promise.then((guard) => ({ guard }), (error) => ({ error }));

describe('an RWLock across processes', { skip: !native.regionsSupported && 'no regions on this platform' }, () => {
  before(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'parklock-rwlock-region-'));
  });
  after(() => removeTemporary(directory));

  it('four processes reading, writing and upgrading: writers alone, every write counted', async () => {
    const { file, rwlock, counts } = region();
    const children = ['sync', 'async', 'mixed', 'mixed'].map((form) => agent(file, 'rounds', 8_000, form));
    const reports = await withinLimit(
      Promise.all(children.map((child) => messageFrom(child, (m) => m && m.counted !== undefined))),
      'every process to finish its rounds',
      60_000,
    );
    await Promise.all(children.map(exited));
    for (const report of reports) assert.deepEqual(report, { counted: 4_000, wrongs: 0 });
    assert.equal(counts[0], 16_000);
    assert.equal(rwlock.isLocked, false);
    rwlock.lock();
    assert.equal(rwlock.writer, threadId);
    assert.equal(rwlock.writerProcess, process.pid);
    rwlock.unlock();
  });

  it('worker threads and processes share it', async () => {
    const { file, counts } = region();
    const children = [agent(file, 'rounds', 4_000, 'mixed'), agent(file, 'rounds', 4_000, 'sync')];
    const reports = children.map((child) => messageFrom(child, (m) => m && m.counted !== undefined));
    const workers = ['async', 'sync'].map(
      (form) => new Worker(AGENT, { workerData: [file, 'rounds', 4_000, form] }),
    );
    const workerReports = workers.map((worker) => messageFrom(worker));
    const all = await withinLimit(Promise.all([...reports, ...workerReports]), 'everyone to finish', 60_000);
    for (const report of all) assert.deepEqual(report, { counted: 2_000, wrongs: 0 });
    await Promise.all(children.map(exited));
    await Promise.all(workers.map((worker) => worker.terminate()));
    assert.equal(counts[0], 8_000);
  });

  it('readers of two processes taking turns never keep a writer out: it drains them', async () => {
    const { file, memory, rwlock, state } = region();
    const stop = new Int32Array(memory.buffer, STOP, 1);
    const readers = [agent(file, 'read-until-stop'), agent(file, 'read-until-stop')];
    const reports = Promise.all(readers.map((child) => messageFrom(child, (m) => m && m.rounds !== undefined)));
    // Both read, overlapping: the read holds rarely all leave at once.
    await withinLimit(Promise.all(readers.map((child) => messageFrom(child, (m) => m === 'reading'))), 'the readers to read');
    for (let i = 0; i < 20; i++) {
      const guard = await withinLimit(i % 2 === 0 ? rwlock.lockAsync() : Promise.resolve(rwlock.lock()), 'the writer beside the readers');
      assert.equal(rwlock.readers, 0);
      guard.unlock();
    }
    Atomics.store(stop, 0, 1);
    for (const report of await withinLimit(reports, 'the readers to stop')) assert.ok(report.rounds > 0);
    await Promise.all(readers.map(exited));
    assert.equal(state(), 0);
  });

  it('a writer killed while it drains the readers leaves them to read again, waiters and newcomers alike', async () => {
    const { file, rwlock, state } = region();
    const drainedBy = async () => {
      const drainer = agent(file, 'wait', 'write');
      await waitFor(() => (state() & DRAINING) !== 0, 'the writer there to drain');
      return drainer;
    };
    const mine = rwlock.lockShared();
    const drainer = await drainedBy();
    // Nobody joins the readers while a writer drains them.
    assert.equal(rwlock.tryLockShared(), false);
    const pending = rwlock.lockSharedAsync();
    drainer.kill('SIGKILL');
    await exited(drainer);
    // The waiter hears of it from its relay. It is not an owner death: the writer held nothing.
    const guard = await withinLimit(pending, 'the reader waiting here');
    assert.equal(rwlock.readers, 2);
    guard.unlock();
    mine.unlock();
    assert.equal(state(), 0);

    // A drain that the last reader left to a writer that had died: a newcomer ends it itself.
    const again = rwlock.lockShared();
    const second = await drainedBy();
    second.kill('SIGKILL');
    await exited(second);
    again.unlock();
    assert.notEqual(state() & DRAINING, 0);
    assert.equal(rwlock.tryLockShared(), true);
    rwlock.unlockShared();
    assert.equal(state(), 0);
  });

  it('the release of a read lock in another process wakes a blocked writer and a Promise writer; a downgrade lets readers in', async () => {
    const { file, rwlock, state, holder } = await heldElsewhere('read');
    assert.equal(rwlock.readers, 1);
    assert.equal(rwlock.tryLock(), false);
    const blocked = agent(file, 'wait', 'write');
    const theirs = outcomeOf(blocked);
    await waitFor(() => (state() & PARKED) !== 0, 'the other process to queue');
    const mine = rwlock.lockAsync();
    holder.send('release');
    await withinLimit(mine, 'the Promise writer here');
    assert.equal(rwlock.isWriteLockedByCurrentThread, true);
    // The other writer may have come first: either way both get it, one after the other.
    const reader = agent(file, 'wait', 'read');
    const read = outcomeOf(reader);
    await withinLimit(messageFrom(reader, (m) => m === 'waiting'), 'the reader to start');
    rwlock.downgrade();
    assert.equal(rwlock.readers >= 1, true);
    rwlock.unlockShared();
    assert.deepEqual(await withinLimit(theirs, 'the blocked writer there'), { outcome: 'acquired', holds: true });
    assert.deepEqual(await withinLimit(read, 'the reader there'), { outcome: 'acquired', holds: true });
    await Promise.all([holder, blocked, reader].map(exited));
    assert.equal(state(), 0);
  });

  it('an upgrade here waits for a reader in another process to leave', async () => {
    const fresh = region();
    const upgradable = fresh.rwlock.lockUpgradable();
    const reader = agent(fresh.file, 'hold', 'read');
    await withinLimit(messageFrom(reader, (m) => m === 'locked'), 'the reader there');
    assert.equal(fresh.rwlock.tryUpgrade(), false);
    assert.equal(fresh.rwlock.tryUpgrade(20), false);
    assert.equal(fresh.rwlock.isUpgradableLockedByCurrentThread, true);
    const upgraded = fresh.rwlock.upgradeAsync();
    reader.send('release');
    await withinLimit(upgraded, 'the upgrade');
    assert.equal(fresh.rwlock.isWriteLockedByCurrentThread, true);
    upgradable.unlock();
    await exited(reader);
    assert.equal(fresh.state(), 0);
  });

  it('a writer killed with SIGKILL is reported to exactly one of a blocked writer there and a Promise reader here', async () => {
    const { file, rwlock, holder } = await heldElsewhere('write');
    assert.equal(rwlock.writerProcess, holder.pid);
    assert.equal(rwlock.writer, null); // another process's thread
    const blocked = agent(file, 'wait', 'write');
    const theirs = outcomeOf(blocked);
    await withinLimit(messageFrom(blocked, (m) => m === 'waiting'), 'the blocked writer to start');
    const promised = settled(rwlock.lockSharedAsync());
    holder.kill('SIGKILL');
    await exited(holder);
    const mine = await withinLimit(promised, 'the Promise reader here');
    const first = mine.error ?? null;
    if (first !== null) assert.equal(first.code, 'ERR_PARKLOCK_OWNER_DIED');
    assert.equal(rwlock.readers, 1);
    (mine.guard ?? first.guard).unlock();
    const report = await withinLimit(theirs, 'the blocked writer there');
    assert.equal(report.holds, true);
    assert.equal([first?.code, report.outcome].filter((code) => code === 'ERR_PARKLOCK_OWNER_DIED').length, 1);
    await exited(blocked);
    assert.equal(rwlock.tryLock(), true);
    rwlock.unlock();
  });

  it('a newcomer after a SIGKILL takes the write lock over at once, with the report; an upgradable holder\'s death releases its hold', async () => {
    const { rwlock, holder } = await heldElsewhere('write');
    assert.equal(rwlock.tryLock(), false);
    holder.kill('SIGKILL');
    await exited(holder);
    const error = assert.throws(() => rwlock.tryLock(), { code: 'ERR_PARKLOCK_OWNER_DIED' }) ?? null;
    assert.equal(error, null);
    assert.equal(rwlock.isWriteLockedByCurrentThread, true);
    rwlock.unlock();

    const upgradable = await heldElsewhere('upgradable');
    assert.equal(upgradable.rwlock.upgraderProcess, upgradable.holder.pid);
    assert.equal(upgradable.rwlock.tryLockUpgradable(), false);
    const pending = upgradable.rwlock.lockAsync();
    upgradable.holder.kill('SIGKILL');
    // A read hold changed nothing: the lock is simply free again, without a report.
    const guard = await withinLimit(pending, 'the writer after the upgradable holder died');
    assert.equal(upgradable.rwlock.isWriteLockedByCurrentThread, true);
    guard.unlock();
    await exited(upgradable.holder);
    assert.equal(upgradable.state(), 0);
  });

  it('waits that time out or are aborted leave the lock to the others, and worker.terminate() ends a blocked wait', async () => {
    const { file, rwlock, state, holder } = await heldElsewhere('write');
    assert.equal(rwlock.tryLockShared(30), false);
    assert.equal(rwlock.tryLock(30), false);
    await assert.rejects(rwlock.lockAsync({ timeout: 30 }), TimeoutError);
    await assert.rejects(rwlock.lockSharedAsync({ timeout: 30 }), TimeoutError);
    const controller = new AbortController();
    const aborted = rwlock.lockUpgradableAsync({ signal: controller.signal });
    controller.abort();
    await assert.rejects(aborted, { name: 'AbortError' });
    const worker = new Worker(AGENT, { workerData: [file, 'wait', 'read'] });
    await withinLimit(messageFrom(worker, (m) => m === 'waiting'), 'the worker to wait');
    await waitFor(() => rwlock.waiting === 1, 'the worker to queue');
    await withinLimit(worker.terminate(), 'worker.terminate() of a thread blocked on a region rwlock');
    assert.equal(rwlock.waiting, 0);
    holder.send('release');
    await exited(holder);
    // The parked bit the waits left behind went with the release: the lock is plain free.
    assert.equal(state(), 0);
    assert.equal(rwlock.tryLock(), true);
    rwlock.unlock();
  });

  it('a worker terminated holding the write lock is reported to the next acquirer; bad offsets get coded errors', async () => {
    const { file, memory, rwlock } = region();
    const worker = new Worker(AGENT, { workerData: [file, 'hold', 'write'] });
    await withinLimit(messageFrom(worker, (m) => m === 'locked'), 'the worker to take the write lock');
    assert.equal(rwlock.writerProcess, process.pid);
    const pending = settled(rwlock.lockSharedAsync());
    await withinLimit(worker.terminate(), 'worker.terminate() of a thread holding a region rwlock');
    const { error } = await withinLimit(pending, 'the reader after the worker ended');
    assert.equal(error?.code, 'ERR_PARKLOCK_OWNER_DIED');
    error.guard.unlock();
    assert.equal(rwlock.tryLock(), true);
    rwlock.unlock();
    for (const offset of [-8, 2, 124, 128]) {
      assert.throws(() => new RWLock(memory, offset), { code: 'ERR_OUT_OF_RANGE' }, String(offset));
    }
    assert.throws(() => new RWLock(memory, '0'), { code: 'ERR_INVALID_ARG_TYPE' });
  });

  it('inspect() names the writer\'s process, and this process\'s waiters by thread', async () => {
    const { rwlock, holder } = await heldElsewhere('write');
    const pending = rwlock.lockSharedAsync();
    const [entry] = inspect().filter((e) => e.primitive === rwlock);
    assert.equal(entry.kind, 'rwlock');
    assert.equal(entry.holderProcess, holder.pid);
    assert.deepEqual(entry.waiters.map((w) => [w.threadId, w.blocking]), [[threadId, false]]);
    holder.kill('SIGKILL');
    await assert.rejects(pending, (error) => {
      assert.equal(error.code, 'ERR_PARKLOCK_OWNER_DIED');
      error.guard.unlock();
      return true;
    });
    await exited(holder);
    assert.deepEqual(inspect().filter((e) => e.primitive === rwlock), []);
  });
});
