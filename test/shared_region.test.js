'use strict';
// A Mutex in sharedMemory(): one lock for every process that opens the file. Counts under it
// stay exact across processes (fork, cluster, separately started, beside worker threads), in
// both blocking and Promise forms; a holder killed with SIGKILL is reported to the next
// acquirer in any process; waits that give up leave the lock to the others; bad files and bad
// arguments get coded errors.
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cluster = require('node:cluster');
const { fork, spawn } = require('node:child_process');
const { Worker } = require('node:worker_threads');
const { sharedMemory, Mutex, Semaphore, Condition, RWLock, Latch, TimeoutError } = require('../lib');
const native = require('../lib/native');
const { fixture, withinLimit, exitIfKeptAlive } = require('./helpers');

exitIfKeptAlive();
const AGENT = fixture('region_agent.js');
const supported = native.regionsSupported;
let directory;
let serial = 0;

// A fresh region file (the test's own name), with its Mutex at 0 and its counter at 8.
function region(size = 64) {
  const file = path.join(directory, `region-${++serial}`);
  const memory = sharedMemory(file, { size });
  return { file, memory, mutex: new Mutex(memory, 0), counter: new Int32Array(memory.buffer, 8, 1) };
}

function messageFrom(emitter, accept = () => true) {
  return new Promise((resolve) => {
    const listener = (message) => {
      if (!accept(message)) return;
      emitter.off('message', listener);
      resolve(message);
    };
    emitter.on('message', listener);
  });
}

function exited(child) {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', resolve));
}

function agent(file, ...task) {
  return fork(AGENT, [file, ...task.map(String)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

// The children's reports, listened for from the start: a report that came before a listener would
// be lost.
function reportsOf(children) {
  return Promise.all(children.map((child) => messageFrom(child, (m) => m && m.counted !== undefined)));
}

async function countIn(children, expectedEach, reports = reportsOf(children)) {
  const counted = await withinLimit(reports, 'every process to count', 60_000);
  await Promise.all(children.map(exited));
  for (const report of counted) assert.equal(report.counted, expectedEach);
}

describe('sharedMemory() and a Mutex across processes', { skip: !supported && 'no regions on this platform' }, () => {
  before(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'parklock-region-'));
  });
  after(() => fs.rmSync(directory, { recursive: true, force: true }));

  it('four forked processes counting under one Mutex end exact, blocking and Promise waits mixed', async () => {
    const { file, counter, mutex } = region();
    const children = ['sync', 'async', 'mixed', 'mixed'].map((form) => agent(file, 'count', 20_000, form));
    await countIn(children, 20_000);
    assert.equal(counter[0], 80_000);
    assert.equal(mutex.isLocked, false);
  });

  it('a cluster primary and 4 workers end exact', async () => {
    const { file, counter } = region();
    cluster.setupPrimary({ exec: AGENT, args: [file, 'count', '10000', 'mixed'], silent: false });
    const workers = Array.from({ length: 4 }, () => cluster.fork());
    const reports = await withinLimit(
      Promise.all(workers.map((worker) => messageFrom(worker, (m) => m && m.counted !== undefined))),
      'the cluster workers to count',
      60_000,
    );
    await Promise.all(workers.map((worker) => new Promise((resolve) => worker.process.exitCode !== null ? resolve() : worker.once('exit', resolve))));
    assert.deepEqual(reports.map((report) => report.counted), [10_000, 10_000, 10_000, 10_000]);
    assert.equal(counter[0], 40_000);
  });

  it('processes started separately, with no channel to each other, end exact', async () => {
    const { file, counter } = region();
    const children = [0, 1, 2].map(() =>
      spawn(process.execPath, [AGENT, file, 'count', '20000', 'sync'], { stdio: ['ignore', 'pipe', 'inherit'] }),
    );
    const outputs = await withinLimit(
      Promise.all(children.map((child) => new Promise((resolve) => {
        let text = '';
        child.stdout.on('data', (chunk) => (text += chunk));
        child.on('exit', (code) => resolve({ code, text }));
      }))),
      'the separate processes to count',
      60_000,
    );
    for (const { code, text } of outputs) {
      assert.equal(code, 0);
      assert.deepEqual(JSON.parse(text), { counted: 20_000 });
    }
    assert.equal(counter[0], 60_000);
  });

  it('worker threads and processes count under the same Mutex', async () => {
    const { file, counter, mutex } = region();
    const children = [agent(file, 'count', 10_000, 'mixed'), agent(file, 'count', 10_000, 'sync')];
    const reports = reportsOf(children);
    const workers = ['async', 'sync'].map(
      (form) => new Worker(AGENT, { workerData: [file, 'count', 10_000, form] }),
    );
    const workerReports = Promise.all(workers.map((worker) => messageFrom(worker)));
    for (let i = 0; i < 10_000; i++) {
      const guard = i % 2 ? await mutex.lockAsync() : mutex.lock();
      const seen = counter[0];
      counter[0] = seen + 1;
      guard.unlock();
    }
    await withinLimit(workerReports, 'the workers to count', 60_000);
    await countIn(children, 10_000, reports);
    await Promise.all(workers.map((worker) => worker.terminate()));
    assert.equal(counter[0], 50_000);
  });

  it('a holder killed with SIGKILL is reported to a Promise waiter, a blocked waiter in another process, and the waiter after them', async () => {
    const { file, mutex } = region();
    const holder = agent(file, 'hold');
    await withinLimit(messageFrom(holder), 'the holder to lock');
    assert.equal(mutex.holderProcess, holder.pid);
    assert.equal(mutex.holder, null); // another process's thread
    const blocked = agent(file, 'wait');
    await withinLimit(messageFrom(blocked, (m) => m === 'waiting'), 'the blocked waiter to start');
    const promised = mutex.lockAsync().then(
      (guard) => ({ guard }),
      (error) => ({ error }),
    );
    const blockedOutcome = messageFrom(blocked, (m) => m && m.outcome !== undefined);
    holder.kill('SIGKILL');
    await exited(holder);
    // One of the two takes it over with the report; the other then gets it from that one.
    const mine = await withinLimit(promised, 'the Promise waiter');
    const first = mine.error ?? null;
    if (first !== null) {
      assert.equal(first.code, 'ERR_PARKLOCK_OWNER_DIED');
      assert.equal(mutex.isHeldByCurrentThread, true);
    }
    mutex.unlock();
    const theirs = await withinLimit(blockedOutcome, 'the blocked waiter in the other process');
    assert.equal(theirs.holds, true);
    // Exactly one of the two heard of the death.
    assert.equal([first?.code, theirs.outcome].filter((code) => code === 'ERR_PARKLOCK_OWNER_DIED').length, 1);
    await exited(blocked);
    assert.equal(mutex.tryLock(), true);
    mutex.unlock();
  });

  it('a newcomer after a SIGKILL takes the lock over at once, with the report', async () => {
    const { file, mutex } = region();
    const holder = agent(file, 'hold');
    await withinLimit(messageFrom(holder), 'the holder to lock');
    assert.equal(mutex.tryLock(), false);
    holder.kill('SIGKILL');
    await exited(holder);
    const error = assert.throws(() => mutex.tryLock(), { code: 'ERR_PARKLOCK_OWNER_DIED' }) ?? null;
    assert.equal(error, null);
    assert.equal(mutex.isHeldByCurrentThread, true);
    mutex.unlock();
  });

  it('waits that time out or are aborted leave the lock to the others, and worker.terminate() ends a blocked wait', async () => {
    const { file, mutex } = region();
    const holder = agent(file, 'hold');
    await withinLimit(messageFrom(holder), 'the holder to lock');
    assert.equal(mutex.tryLock(30), false);
    await assert.rejects(mutex.lockAsync({ timeout: 30 }), TimeoutError);
    const controller = new AbortController();
    const aborted = mutex.lockAsync({ signal: controller.signal });
    controller.abort();
    await assert.rejects(aborted, { name: 'AbortError' });
    assert.equal(mutex.holderProcess, holder.pid);
    holder.kill('SIGTERM');
    await exited(holder);
    assert.throws(() => mutex.lock(), { code: 'ERR_PARKLOCK_OWNER_DIED' });
    const worker = new Worker(AGENT, { workerData: [file, 'wait'] });
    await withinLimit(messageFrom(worker, (m) => m === 'waiting'), 'the worker to wait');
    await withinLimit(worker.terminate(), 'worker.terminate() of a thread blocked on a region mutex');
    mutex.unlock();
    assert.equal(mutex.tryLock(), true);
    mutex.unlock();
  });

  it('a process that exits normally holding the Mutex is reported as its owner death', async () => {
    const { file, mutex } = region();
    const holder = agent(file, 'hold-then-exit');
    await withinLimit(exited(holder), 'the holder to exit');
    assert.equal(holder.exitCode, 0);
    const error = await mutex.lockAsync().then(() => null, (failure) => failure);
    assert.equal(error?.code, 'ERR_PARKLOCK_OWNER_DIED');
    assert.equal(mutex.isHeldByCurrentThread, true);
    mutex.unlock();
  });

  it('opens the same region again in the same process, and creates files with mode 0o600', () => {
    const { file, memory, mutex } = region();
    assert.equal(memory.created, true);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    const again = sharedMemory(file);
    assert.equal(again.created, false);
    assert.equal(again.byteLength, 64);
    mutex.lock();
    assert.equal(new Mutex(again, 0).isHeldByCurrentThread, true);
    mutex.unlock();
  });

  it('refuses bad arguments with coded errors', () => {
    const { memory } = region();
    assert.throws(() => sharedMemory(42), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => sharedMemory(''), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => sharedMemory(path.join(directory, 'x'), null), { code: 'ERR_INVALID_ARG_TYPE' });
    for (const size of [0, 7, 12, 2 ** 31, 1.5, NaN]) {
      assert.throws(() => sharedMemory(path.join(directory, 'x'), { size }), { code: 'ERR_OUT_OF_RANGE' }, String(size));
    }
    assert.throws(() => sharedMemory(path.join(directory, 'x'), { size: '64' }), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => sharedMemory(path.join(directory, 'x'), { mode: 0o1000 }), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => sharedMemory(path.join(directory, 'x'), { create: 1 }), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.equal(fs.existsSync(path.join(directory, 'x')), false);
    for (const offset of [-4, 2, 64, 61]) {
      assert.throws(() => new Mutex(memory, offset), { code: 'ERR_OUT_OF_RANGE' }, String(offset));
    }
    assert.throws(() => new Mutex(memory, '0'), { code: 'ERR_INVALID_ARG_TYPE' });
  });

  it('refuses what does not wait across processes yet, rather than waiting wrongly', () => {
    const { memory, mutex } = region(256);
    assert.throws(() => new Semaphore(memory, 16), { code: 'ERR_PARKLOCK_UNSUPPORTED' });
    assert.throws(() => Semaphore.init(memory, 16, 3), { code: 'ERR_PARKLOCK_UNSUPPORTED' });
    assert.throws(() => new RWLock(memory, 64), { code: 'ERR_PARKLOCK_UNSUPPORTED' });
    assert.throws(() => Latch.init(memory, 128, 1), { code: 'ERR_PARKLOCK_UNSUPPORTED' });
    const condition = new Condition();
    mutex.lock();
    assert.throws(() => condition.wait(mutex, 1), { code: 'ERR_PARKLOCK_UNSUPPORTED' });
    mutex.unlock();
    // Not a location to post: a worker opens the path itself.
    assert.equal(Object.keys(mutex).length, 0);
  });

  it('refuses files that are not regions, with the path in the error', () => {
    const file = (name) => path.join(directory, name);
    assert.throws(() => sharedMemory(file('missing'), { create: false }), { code: 'ENOENT' });
    fs.symlinkSync(region().file, file('link'));
    assert.throws(() => sharedMemory(file('link')), { code: 'ELOOP' });
    assert.throws(() => sharedMemory(directory), { code: 'EISDIR' });
    fs.writeFileSync(file('garbage'), Buffer.alloc(20000, 0x5a), { mode: 0o600 });
    assert.throws(() => sharedMemory(file('garbage')), { code: 'ERR_PARKLOCK_REGION_INVALID', path: file('garbage') });
    fs.writeFileSync(file('short'), 'not a region', { mode: 0o600 });
    assert.throws(() => sharedMemory(file('short')), { code: 'ERR_PARKLOCK_REGION_INVALID' });
    const header = Buffer.alloc(native.regionHeaderBytes + 64);
    header.writeUInt32LE(0x4b4c4b50, 0);
    header.writeUInt32LE(99, 4);
    header.writeBigUInt64LE(64n, 8);
    fs.writeFileSync(file('future'), header, { mode: 0o600 });
    assert.throws(() => sharedMemory(file('future')), { code: 'ERR_PARKLOCK_REGION_VERSION', message: /version 99/ });
    const { file: small } = region(64);
    assert.throws(() => sharedMemory(small, { size: 128 }), { code: 'ERR_PARKLOCK_REGION_SIZE' });
    header.writeUInt32LE(native.regionVersion, 4);
    header.writeBigUInt64LE(1024n, 8); // says 1024 bytes, has 64: truncated
    fs.writeFileSync(file('truncated'), header, { mode: 0o600 });
    assert.throws(() => sharedMemory(file('truncated')), { code: 'ERR_PARKLOCK_REGION_SIZE' });
  });

  it('refuses a file that belongs to another user', { skip: process.getuid?.() !== 0 && 'needs root to make one' }, () => {
    const file = path.join(directory, 'foreign');
    fs.writeFileSync(file, '', { mode: 0o666 });
    fs.chownSync(file, 65534, 65534);
    assert.throws(() => sharedMemory(file), { code: 'ERR_PARKLOCK_REGION_OWNER' });
  });
});

describe('sharedMemory() where regions are not built', { skip: supported && 'regions are built here' }, () => {
  it('throws ERR_PARKLOCK_UNSUPPORTED and creates no file', () => {
    const file = path.join(os.tmpdir(), `parklock-unsupported-${process.pid}`);
    assert.throws(() => sharedMemory(file), { code: 'ERR_PARKLOCK_UNSUPPORTED' });
    assert.equal(fs.existsSync(file), false);
  });
});
