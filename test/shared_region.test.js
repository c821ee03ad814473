'use strict';
// A Mutex in sharedMemory(): one lock for every process that opens the file. Counts under it
// stay exact across processes (fork, cluster, separately started, beside worker threads), in
// both blocking and Promise forms; a holder killed with SIGKILL is reported to the next
// acquirer in any process; waits that give up leave the lock to the others; bad files and bad
// arguments get coded errors. A Semaphore, a Barrier, a Latch and a Once in a region keep their
// invariants across processes too, and wake waiters in other processes; from Node 26 a region's
// primitives post to workers. A process waiting on a thousand Mutexes of a region at once hears
// of each release, and of the death of their holder, whichever of its relay threads watches it.
const { describe, it, before, after, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cluster = require('node:cluster');
const { types } = require('node:util');
const { fork, spawn } = require('node:child_process');
const { Worker, threadId } = require('node:worker_threads');
const { sharedMemory, Mutex, Semaphore, Condition, RWLock, Latch, Barrier, Once, futex, inspect, watchdog, TimeoutError, OwnerDiedError } =
  require('../lib');
const native = require('../lib/native');
const { isRegionMutex } = require('../lib/mutex');
const { fixture, withinLimit, waitFor, exitIfKeptAlive, messageFrom, exited, removeTemporary } = require('./helpers');

exitIfKeptAlive();
const AGENT = fixture('region_agent.js');
const FAMILY_AGENT = fixture('region_family_agent.js');
const MANY_WORDS = fixture('region_many_words.js');
const { manyWords, acquired } = require('./fixtures/region_many_words');
const { FAMILY } = require('./fixtures/region_family_layout');
const supported = native.regionsSupported;
let directory;
let serial = 0;

// A fresh region file (the test's own name), with its Mutex at 0 and its counter at 8.
function region(size = 64) {
  const file = path.join(directory, `region-${++serial}`);
  const memory = sharedMemory(file, { size });
  return { file, memory, mutex: new Mutex(memory, 0), counter: new Int32Array(memory.buffer, 8, 1) };
}

// A fresh region whose Mutex a forked agent holds (task 'hold'), once it has reported so.
async function heldElsewhere() {
  const fresh = region();
  const holder = agent(fresh.file, 'hold');
  await withinLimit(messageFrom(holder), 'the holder to lock');
  return { ...fresh, holder };
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
  after(() => removeTemporary(directory));

  it('four forked processes counting under one Mutex end exact, blocking and Promise waits mixed', async () => {
    const { file, counter, mutex } = region();
    const children = ['sync', 'async', 'mixed', 'mixed'].map((form) => agent(file, 'count', 20_000, form));
    await countIn(children, 20_000);
    assert.equal(counter[0], 80_000);
    assert.equal(mutex.isLocked, false);
    mutex.lock();
    assert.equal(mutex.holder, threadId);
    assert.equal(mutex.holderProcess, process.pid);
    mutex.unlock();
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
    const { file, mutex, holder } = await heldElsewhere();
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
    const { mutex, holder } = await heldElsewhere();
    assert.equal(mutex.tryLock(), false);
    holder.kill('SIGKILL');
    await exited(holder);
    const error = assert.throws(() => mutex.tryLock(), { code: 'ERR_PARKLOCK_OWNER_DIED' }) ?? null;
    assert.equal(error, null);
    assert.equal(mutex.isHeldByCurrentThread, true);
    mutex.unlock();
  });

  it('waits that time out or are aborted leave the lock to the others, and worker.terminate() ends a blocked wait', async () => {
    const { file, mutex, holder } = await heldElsewhere();
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

  it('inspect() and the watchdog name the holder\'s process, and this process\'s waiters by thread', async () => {
    const { mutex, holder } = await heldElsewhere();
    const pending = mutex.lockAsync();
    const [entry] = inspect().filter((e) => e.primitive === mutex);
    assert.equal(entry.kind, 'mutex');
    assert.equal(entry.holderProcess, holder.pid);
    assert.equal(entry.holder, null);
    assert.deepEqual(entry.waiters.map((w) => [w.threadId, w.blocking]), [[threadId, false]]);
    const stalls = [];
    const dog = watchdog({ thresholdMs: 0, intervalMs: 5, onStall: (entries) => stalls.push(...entries) });
    await withinLimit(new Promise((resolve) => {
      const poll = setInterval(() => stalls.length > 0 && (clearInterval(poll), resolve()), 5);
    }), 'the watchdog');
    dog.stop();
    assert.equal(stalls.find((e) => e.primitive === mutex)?.holderProcess, holder.pid);
    holder.kill('SIGKILL');
    await assert.rejects(pending, { code: 'ERR_PARKLOCK_OWNER_DIED' });
    assert.equal(mutex.isHeldByCurrentThread, true);
    const mine = inspect().filter((e) => e.primitive === mutex);
    assert.deepEqual(mine, []);
    mutex.unlock();
    await exited(holder);
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
    // Windows has no modes: a file's access is its directory's inherited ACL.
    if (process.platform !== 'win32') assert.equal(fs.statSync(file).mode & 0o777, 0o600);
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
    assert.throws(() => sharedMemory(path.join(directory, 'x'), { mode: '600' }), { code: 'ERR_INVALID_ARG_TYPE' });
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    assert.throws(() => sharedMemory(path.join(directory, 'x'), revoked.proxy), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.equal(fs.existsSync(path.join(directory, 'x')), false);
    for (const offset of [-4, 2, 64, 61]) {
      assert.throws(() => new Mutex(memory, offset), { code: 'ERR_OUT_OF_RANGE' }, String(offset));
    }
    assert.throws(() => new Mutex(memory, '0'), { code: 'ERR_INVALID_ARG_TYPE' });
    // The addon's own way in (Windows's, where it opens the file itself), on every platform.
    assert.throws(() => native.openRegion(42, true, 0), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => native.openRegion(path.join(directory, 'x'), 'yes', 0), { code: 'ERR_INVALID_ARG_TYPE' });
    for (const size of [-8, 1.5, NaN, 2 ** 40]) {
      assert.throws(() => native.openRegion(path.join(directory, 'x'), true, size), { code: 'ERR_OUT_OF_RANGE' }, String(size));
    }
    const missing = native.openRegion(path.join(directory, 'missing'), true, 0);
    assert.equal(missing.error, 'open');
    assert.equal(missing.errno, require('node:os').constants.errno.ENOENT);
    assert.equal(fs.existsSync(path.join(directory, 'missing')), false);
    const opened = native.openRegion(region().file, false, 0);
    assert.ok(opened.memory.byteLength > 0, 'an existing region opens by its path');
  });

  it('refuses what does not wait across processes, rather than waiting wrongly', async () => {
    const { memory, mutex } = region(256);
    // notify(count) wakes at most `count`, which waking other processes' waiters would break.
    const code = types.isSharedArrayBuffer(memory.buffer) ? 'ERR_PARKLOCK_UNSUPPORTED' : 'ERR_INVALID_ARG_TYPE';
    for (const call of [() => futex.wait(new Int32Array(memory.buffer, 128, 1), 0, 0, 10),
      () => futex.notify(new Int32Array(memory.buffer, 128, 1), 0)]) {
      assert.throws(call, { code });
    }
    // Before Node 26 the memory is an ArrayBuffer, which posting would copy: no location to post,
    // a worker opens the path itself.
    if (!types.isSharedArrayBuffer(memory.buffer)) assert.equal(mutex.buffer, undefined);
  });

  it('before Node 26, a primitive posted to a worker and a region\'s ArrayBuffer say what to pass instead', async (t) => {
    const { file, memory } = region(256);
    if (types.isSharedArrayBuffer(memory.buffer)) return t.skip('the memory is a SharedArrayBuffer here: it posts');
    assert.throws(() => new Mutex(memory.buffer), {
      code: 'ERR_INVALID_ARG_TYPE',
      message: /pass the memory object itself, as in new X\(memory, byteOffset\)/,
    });
    const rwlock = new RWLock(memory, 8);
    const worker = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       const { RWLock } = require(${JSON.stringify(require.resolve('../lib'))});
       try { new RWLock(workerData); } catch (error) { parentPort.postMessage({ code: error.code, message: error.message }); }`,
      { eval: true, workerData: rwlock },
    );
    const ended = new Promise((resolve) => worker.once('exit', resolve));
    const refusal = await withinLimit(messageFrom(worker), 'the worker to report');
    await withinLimit(ended, 'the worker to exit');
    assert.equal(refusal.code, 'ERR_PARKLOCK_NOT_POSTABLE');
    assert.match(refusal.message, /call sharedMemory\(path\) in the worker/);
    assert.ok(refusal.message.includes(JSON.stringify(file)), 'it names the path');
    assert.match(refusal.message, /byteOffset 8/);
  });

  it('where the memory is a SharedArrayBuffer (Node 26 on), its primitives post to workers and count beside processes', async (t) => {
    const { file, counter, memory, mutex } = region();
    if (!types.isSharedArrayBuffer(memory.buffer)) return t.skip('this Node makes no SharedArrayBuffer over external memory');
    assert.deepEqual(Object.keys(mutex), ['buffer', 'byteOffset']);
    // The SharedArrayBuffer itself is the region too.
    assert.equal(isRegionMutex(new Mutex(memory.buffer, 0)), true);
    // So is an RWLock there (test/rwlock_across_processes.test.js).
    assert.equal(new RWLock(memory.buffer, 16).writerProcess, null);
    const child = agent(file, 'count', 10_000, 'mixed');
    const reports = reportsOf([child]);
    const workers = ['async', 'sync'].map(
      (form) => new Worker(AGENT, { workerData: [file, 'count', 10_000, form, mutex] }),
    );
    const workerReports = Promise.all(workers.map((worker) => messageFrom(worker)));
    await withinLimit(workerReports, 'the workers to count', 60_000);
    await countIn([child], 10_000, reports);
    await Promise.all(workers.map((worker) => worker.terminate()));
    assert.equal(counter[0], 30_000);
    assert.equal(mutex.isLocked, false);
  });

  it('refuses files that are not regions, with the path in the error', () => {
    const file = (name) => path.join(directory, name);
    assert.throws(() => sharedMemory(file('missing'), { create: false }), { code: 'ENOENT' });
    fs.symlinkSync(region().file, file('link'));
    // Where the system shows it as one: Wine's symbolic links read as missing.
    if (fs.lstatSync(file('link'), { throwIfNoEntry: false })?.isSymbolicLink()) {
      assert.throws(() => sharedMemory(file('link')), { code: 'ELOOP' });
    }
    assert.throws(() => sharedMemory(directory), { code: 'EISDIR' });
    fs.writeFileSync(file('garbage'), Buffer.alloc(20000, 0x5a), { mode: 0o600 });
    assert.throws(() => sharedMemory(file('garbage')), { code: 'ERR_PARKLOCK_REGION_INVALID', path: file('garbage') });
    fs.writeFileSync(file('short'), 'not a region', { mode: 0o600 });
    assert.throws(() => sharedMemory(file('short')), { code: 'ERR_PARKLOCK_REGION_INVALID' });
    const header = Buffer.alloc(native.regionHeaderBytes + 64);
    header.writeUInt32LE(0x4b4c4b50, 0);
    header.writeUInt32LE(99, 4);
    header.writeBigUInt64LE(64n, 8);
    header.writeUInt32LE(native.crossProcessMechanism === 'doorbell' ? 1 : 0, 28); // the mechanism
    fs.writeFileSync(file('future'), header, { mode: 0o600 });
    assert.throws(() => sharedMemory(file('future')), { code: 'ERR_PARKLOCK_REGION_VERSION', message: /version 99/ });
    const { file: small } = region(64);
    assert.throws(() => sharedMemory(small, { size: 128 }), { code: 'ERR_PARKLOCK_REGION_SIZE' });
    header.writeUInt32LE(native.regionVersion, 4);
    header.writeBigUInt64LE(1024n, 8); // says 1024 bytes, has 64: truncated
    fs.writeFileSync(file('truncated'), header, { mode: 0o600 });
    assert.throws(() => sharedMemory(file('truncated')), { code: 'ERR_PARKLOCK_REGION_SIZE' });
  });

  it('refuses a file in use by processes of the other cross-process mechanism, either way round', { skip: process.platform !== 'linux' && 'only Linux has both' }, () => {
    const other = native.crossProcessMechanism === 'doorbell' ? '' : 'portable';
    const { spawnSync } = require('node:child_process');
    const open = (file) =>
      spawnSync(process.execPath, ['-e', `try { require(${JSON.stringify(require.resolve('../lib'))}).sharedMemory(${JSON.stringify(file)}); console.log('opened') } catch (e) { console.log(e.code + ' ' + e.message) }`], {
        env: { ...process.env, PARKLOCK_CROSS_PROCESS: other },
        encoding: 'utf8',
      }).stdout.trim();
    // Made here, opened there.
    const { file } = region(64);
    assert.match(open(file), /^ERR_PARKLOCK_REGION_MECHANISM .*would not wake each other/);
    // Made there, opened here; and there again.
    const theirs = path.join(path.dirname(file), 'theirs');
    assert.equal(open(theirs), 'opened');
    assert.throws(() => sharedMemory(theirs), { code: 'ERR_PARKLOCK_REGION_MECHANISM', path: theirs });
    assert.equal(open(theirs), 'opened');
  });

  it('refuses a file that belongs to another user', { skip: process.getuid?.() !== 0 && 'needs root to make one' }, () => {
    const file = path.join(directory, 'foreign');
    fs.writeFileSync(file, '', { mode: 0o666 });
    fs.chownSync(file, 65534, 65534);
    assert.throws(() => sharedMemory(file), { code: 'ERR_PARKLOCK_REGION_OWNER' });
  });
});

describe('a Semaphore, a Barrier, a Latch, a Once and a Condition across processes', { skip: !supported && 'no regions on this platform' }, () => {
  before(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'parklock-region-'));
  });
  after(() => removeTemporary(directory));

  function family() {
    const file = path.join(directory, `family-${++serial}`);
    return { file, memory: sharedMemory(file, { size: FAMILY.BYTES }) };
  }
  function familyAgent(file, ...task) {
    return fork(FAMILY_AGENT, [file, ...task.map(String)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  }
  const reportOf = (child, key) => messageFrom(child, (m) => m && m[key] !== undefined);

  it('four processes share a Semaphore\'s permits: never more inside than there are, every round counted', async () => {
    const { file, memory } = family();
    const semaphore = Semaphore.init(memory, FAMILY.SEMAPHORE, 3);
    const children = ['sync', 'async', 'mixed', 'mixed'].map((form) => familyAgent(file, 'semaphore', 5000, form));
    const reports = await withinLimit(Promise.all(children.map((c) => reportOf(c, 'counted'))), 'every process to count', 60_000);
    await Promise.all(children.map(exited));
    for (const report of reports) {
      assert.equal(report.counted, 5000);
      assert.ok(report.mostInside <= 3, `${report.mostInside} permits held at once`);
    }
    assert.equal(semaphore.available, 3);
    assert.equal(new Int32Array(memory.buffer, FAMILY.INSIDE, 1)[0], 0);
  });

  it('a release in one process wakes a blocked acquire in another and a Promise acquire here; timeouts and aborts take nothing', async () => {
    const { file, memory } = family();
    const semaphore = Semaphore.init(memory, FAMILY.SEMAPHORE, 0);
    assert.equal(semaphore.tryAcquire(1, 30), false);
    await assert.rejects(semaphore.acquireAsync(1, { timeout: 30 }), TimeoutError);
    const controller = new AbortController();
    const aborted = semaphore.acquireAsync(1, { signal: controller.signal });
    controller.abort();
    await assert.rejects(aborted, { name: 'AbortError' });
    const blocked = familyAgent(file, 'semaphore-wait');
    const acquired = reportOf(blocked, 'acquired');
    await withinLimit(messageFrom(blocked, (m) => m === 'waiting'), 'the other process to wait');
    const here = semaphore.acquireAsync(1);
    const releaser = familyAgent(file, 'semaphore-release', 2);
    await withinLimit(Promise.all([here, acquired]), 'both acquires to be woken by the release in a third process');
    await Promise.all([blocked, releaser].map(exited));
    assert.equal(semaphore.available, 0);
    const worker = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       const { sharedMemory, Semaphore } = require(workerData.lib);
       const semaphore = new Semaphore(sharedMemory(workerData.file, { create: false }), workerData.offset);
       parentPort.postMessage('waiting');
       semaphore.acquire();`,
      { eval: true, workerData: { lib: path.join(__dirname, '..'), file, offset: FAMILY.SEMAPHORE } },
    );
    await withinLimit(messageFrom(worker, (m) => m === 'waiting'), 'the worker to wait');
    await withinLimit(worker.terminate(), 'worker.terminate() of a thread blocked on a region semaphore');
    semaphore.release(1);
    assert.equal(semaphore.available, 1);
    assert.equal(semaphore.waiting, 0);
  });

  it('four processes pass 200 generations of a Barrier together, one leader each, nobody early', async () => {
    const { file, memory } = family();
    Barrier.init(memory, FAMILY.BARRIER, 4);
    const children = ['sync', 'async', 'mixed', 'sync'].map((form) => familyAgent(file, 'barrier', 200, form));
    const reports = await withinLimit(Promise.all(children.map((c) => reportOf(c, 'generations'))), 'the generations', 60_000);
    await Promise.all(children.map(exited));
    assert.equal(reports.reduce((sum, r) => sum + r.leaders, 0), 200);
    for (const report of reports) assert.equal(report.early, 0);
    assert.equal(new Int32Array(memory.buffer, FAMILY.ARRIVALS, 1)[0], 800);
  });

  it('a Barrier wait that times out withdraws its arrival, so the next generation still needs every party', async () => {
    const { file, memory } = family();
    const barrier = Barrier.init(memory, FAMILY.BARRIER, 2);
    assert.throws(() => barrier.wait(30), TimeoutError);
    await assert.rejects(barrier.waitAsync({ timeout: 30 }), TimeoutError);
    const other = familyAgent(file, 'barrier', 1, 'sync');
    const report = reportOf(other, 'generations');
    const leader = await withinLimit(barrier.waitAsync(), 'the generation with the other process');
    const { leaders } = await withinLimit(report, 'the other process to pass');
    assert.equal(Number(leader) + leaders, 1);
    await exited(other);
  });

  it('the count-down that opens a Latch in one process releases blocked and Promise waits in the others', async () => {
    const { file, memory } = family();
    const latch = Latch.init(memory, FAMILY.LATCH, 5);
    const opened = latch.waitAsync();
    const children = ['sync', 'async', 'sync', 'async'].map((form) => familyAgent(file, 'latch', 0, form));
    const released = Promise.all(children.map((c) => reportOf(c, 'released')));
    await withinLimit(Promise.all(children.map((c) => messageFrom(c, (m) => m === 'waiting'))), 'four count-downs');
    assert.equal(latch.count, 1);
    assert.equal(latch.tryWait(), false);
    const last = familyAgent(file, 'latch-count');
    const reports = await withinLimit(released, 'every waiter to be released');
    await withinLimit(opened, 'the Promise wait here');
    for (const report of reports) assert.equal(report.released, true);
    await Promise.all([...children, last].map(exited));
    assert.equal(latch.count, 0);
  });

  it('four processes and this one race to run a Once: it runs exactly once, and every caller returns after it', async () => {
    const { file, memory } = family();
    const once = new Once(memory, FAMILY.ONCE);
    const children = ['sync', 'async', 'sync', 'async'].map((form) => familyAgent(file, 'once', 0, form));
    const reports = Promise.all(children.map((c) => reportOf(c, 'ran')));
    const here = await once.runAsync(() => Atomics.add(new Int32Array(memory.buffer, FAMILY.RUNS, 1), 0, 1));
    const ran = (await withinLimit(reports, 'every process to return')).filter((r) => r.ran).length + Number(here);
    await Promise.all(children.map(exited));
    assert.equal(ran, 1);
    assert.equal(new Int32Array(memory.buffer, FAMILY.RUNS, 1)[0], 1);
    assert.equal(once.done, true);
  });

  it('a runner killed with SIGKILL is reported to a Promise caller waiting here, which runs it again', async () => {
    const { file, memory } = family();
    const once = new Once(memory, FAMILY.ONCE);
    const runner = familyAgent(file, 'once-hang');
    await withinLimit(messageFrom(runner, (m) => m === 'running'), 'the other process to run');
    await assert.rejects(once.runAsync(() => {}, { timeout: 30 }), TimeoutError);
    let previousRunDied;
    const ran = once.runAsync((died) => {
      previousRunDied = died;
    });
    runner.kill('SIGKILL');
    assert.equal(await withinLimit(ran, 'the report of the dead runner'), true);
    assert.equal(previousRunDied?.code, 'ERR_PARKLOCK_OWNER_DIED');
    assert.equal(once.done, true);
    await exited(runner);
  });

  it('a runner killed with SIGKILL is reported to exactly one waiter, blocked in another process or a Promise here', async () => {
    const { file, memory } = family();
    const once = new Once(memory, FAMILY.ONCE);
    const runs = new Int32Array(memory.buffer, FAMILY.RUNS, 1);
    const runner = familyAgent(file, 'once-hang');
    await withinLimit(messageFrom(runner, (m) => m === 'running'), 'the other process to run');
    await assert.rejects(once.runAsync(() => {}, { timeout: 30 }), TimeoutError);
    const blocked = familyAgent(file, 'once', 0, 'sync');
    const theirs = reportOf(blocked, 'ran');
    await withinLimit(messageFrom(blocked, (m) => m === 'waiting'), 'the blocked caller');
    let previousRunDied;
    const ran = once.runAsync((died) => {
      previousRunDied = died;
      Atomics.add(runs, 0, 1);
    });
    runner.kill('SIGKILL');
    const here = await withinLimit(ran, 'the report of the dead runner');
    const report = await withinLimit(theirs, 'the blocked caller to return');
    // One of the two ran it again, told of the death; the other found it done.
    assert.equal(Number(here) + Number(report.ran), 1);
    assert.deepEqual([previousRunDied?.code, report.died].filter(Boolean), ['ERR_PARKLOCK_OWNER_DIED']);
    assert.equal(runs[0], 1);
    assert.equal(once.done, true);
    await Promise.all([runner, blocked].map(exited));
  });

  // A Condition with its Mutex, and what the condition's word counts: [waits registered in every
  // process, notifications pending], from one load.
  function conditionIn(memory) {
    const word = new Int32Array(memory.buffer, FAMILY.CONDITION, 1);
    const { WAITER_SHIFT, PENDING_SHIFT, MOST_WAITERS } = native.conditionLayout;
    return {
      mutex: new Mutex(memory, FAMILY.MUTEX),
      condition: new Condition(memory, FAMILY.CONDITION),
      word: () => Atomics.load(word, 0),
      counts: () => {
        const seen = Atomics.load(word, 0);
        return [(seen >> WAITER_SHIFT) & MOST_WAITERS, (seen >> PENDING_SHIFT) & MOST_WAITERS];
      },
    };
  }
  // The agent reported 'waiting' holding the mutex: once this thread has had the mutex, the
  // agent's wait has registered.
  async function waitingIn(child, mutex) {
    await withinLimit(messageFrom(child, (m) => m === 'waiting'), 'the other process to wait');
    await withinLimit(mutex.lockAsync(), 'the mutex, once the other process waits');
    mutex.unlock();
  }

  it('producers and consumers in five processes pass every item through a Condition, no wake-up lost', async () => {
    const { file, memory } = family();
    const { counts } = conditionIn(memory);
    const items = new Int32Array(memory.buffer, FAMILY.ITEMS, 1);
    const consumers = ['sync', 'async', 'mixed'].map((form) => familyAgent(file, 'consume', 0, form));
    const taken = Promise.all(consumers.map((c) => reportOf(c, 'taken')));
    const producers = ['sync', 'mixed'].map((form) => familyAgent(file, 'produce', 1000, form));
    await withinLimit(Promise.all(producers.map((p) => reportOf(p, 'produced'))), 'the producers', 60_000);
    // A lost wake-up would leave items behind with every consumer asleep.
    await waitFor(() => Atomics.load(items, 0) === 0, 'the consumers to take every item');
    const closer = familyAgent(file, 'condition-close');
    await withinLimit(reportOf(closer, 'posted'), 'the close');
    const reports = await withinLimit(taken, 'the consumers to finish');
    assert.equal(reports.reduce((sum, report) => sum + report.taken, 0), 2000);
    await Promise.all([...consumers, ...producers, closer].map(exited));
    // Every wait claimed its notification or withdrew: nobody is counted, nothing is pending.
    assert.deepEqual(counts(), [0, 0]);
  });

  it('processes taking turns through one Condition never lose a turn: a wait claims only notifies made after it began', async () => {
    const { file, memory } = family();
    const { word } = conditionIn(memory);
    const turn = new Int32Array(memory.buffer, FAMILY.TURN, 1);
    // notifyOne() to the one other party: the notifier's own next wait must not take it.
    const pair = [['sync', 0], ['mixed', 1]].map(([form, me]) => familyAgent(file, 'turns', 1000, form, me, 2));
    await withinLimit(Promise.all(pair.map((c) => reportOf(c, 'turns'))), 'two parties to take their turns', 60_000);
    assert.equal(Atomics.load(turn, 0), 2000);
    Atomics.store(turn, 0, 0);
    const trio = [['sync', 0], ['async', 1], ['mixed', 2]].map(([form, me]) => familyAgent(file, 'turns', 500, form, me, 3));
    await withinLimit(Promise.all(trio.map((c) => reportOf(c, 'turns'))), 'three parties to take their turns', 60_000);
    assert.equal(Atomics.load(turn, 0), 1500);
    await Promise.all([...pair, ...trio].map(exited));
    // Every waiter claimed its notification: none is registered or pending (the epoch stays).
    assert.equal(word() & ((1 << native.conditionLayout.EPOCH_SHIFT) - 1), 0);
  });

  it('a notifyAll() in a third process wakes a blocked wait in another process and a Promise wait here', async () => {
    const { file, memory } = family();
    const { mutex, condition, counts } = conditionIn(memory);
    const blocked = familyAgent(file, 'condition-wait', 0, 'sync');
    const theirs = reportOf(blocked, 'notified');
    await waitingIn(blocked, mutex);
    mutex.lock();
    const here = condition.waitAsync(mutex);
    assert.equal(counts()[0], 2);
    const closer = familyAgent(file, 'condition-close');
    assert.equal((await withinLimit(reportOf(closer, 'posted'), 'the notifyAll')).posted, 2);
    assert.equal(await withinLimit(here, 'the Promise wait here'), true);
    mutex.unlock();
    assert.deepEqual(await withinLimit(theirs, 'the blocked wait there'), { notified: true });
    await Promise.all([blocked, closer].map(exited));
    assert.deepEqual(counts(), [0, 0]);
  });

  it('notifyOne() posts one notification per waiter of any process; waits that time out, are aborted or are terminated withdraw', async () => {
    const { file, memory } = family();
    const { mutex, condition, word, counts } = conditionIn(memory);
    mutex.lock();
    assert.equal(condition.wait(mutex, 20), false);
    assert.equal(await condition.waitAsync(mutex, { timeout: 20 }), false);
    const controller = new AbortController();
    const aborted = condition.waitAsync(mutex, { signal: controller.signal });
    controller.abort();
    await assert.rejects(aborted, { name: 'AbortError' });
    mutex.unlock();
    assert.equal(word(), 0);

    const waiting = familyAgent(file, 'condition-wait', 0, 'async');
    const theirs = reportOf(waiting, 'notified');
    await waitingIn(waiting, mutex);
    mutex.lock();
    Atomics.store(new Int32Array(memory.buffer, FAMILY.CLOSED, 1), 0, 1);
    assert.equal(condition.notifyOne(), 1);
    // A second notify adds nothing: the one waiter has a notification pending, or has claimed it.
    condition.notifyOne();
    assert.ok(['1,1', '0,0'].includes(counts().join()), counts().join());
    mutex.unlock();
    assert.deepEqual(await withinLimit(theirs, 'the other process to be notified'), { notified: true });
    await exited(waiting);
    assert.deepEqual(counts(), [0, 0]);
    assert.equal(condition.notifyOne(), 0);

    const worker = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       const { sharedMemory, Mutex, Condition } = require(workerData.lib);
       const memory = sharedMemory(workerData.file, { create: false });
       const mutex = new Mutex(memory, workerData.mutex);
       mutex.lock();
       parentPort.postMessage('waiting');
       new Condition(memory, workerData.condition).wait(mutex);`,
      { eval: true, workerData: { lib: path.join(__dirname, '..'), file, mutex: FAMILY.MUTEX, condition: FAMILY.CONDITION } },
    );
    await waitingIn(worker, mutex);
    assert.deepEqual(counts(), [1, 0]);
    await withinLimit(worker.terminate(), 'worker.terminate() of a thread blocked on a region condition');
    assert.deepEqual(counts(), [0, 0]);
  });

  it('a process killed while it waits stays counted by notifyOne(): notifications posted for it go to the living, none is lost; notifyAll() takes it out', async () => {
    const { file, memory } = family();
    const { mutex, condition, counts } = conditionIn(memory);
    const blocked = familyAgent(file, 'condition-wait', 0, 'sync');
    await waitingIn(blocked, mutex);
    blocked.kill('SIGKILL');
    await exited(blocked);
    assert.deepEqual(counts(), [1, 0]);
    mutex.lock();
    assert.equal(condition.notifyOne(), 1);
    // Posted before this wait began, for the dead waiter: not this wait's to claim.
    assert.equal(condition.wait(mutex, 50), false);
    const here = condition.waitAsync(mutex);
    mutex.lock();
    assert.deepEqual(counts(), [2, 1]);
    // The next notify makes this wait eligible, and the pending one is enough for it.
    assert.equal(condition.notifyOne(), 1);
    mutex.unlock();
    assert.equal(await withinLimit(here, 'the wait after the death'), true);
    mutex.unlock();
    assert.deepEqual(counts(), [1, 1]);
    // It counts only the waits that can claim: none.
    assert.equal(condition.notifyAll(), 0);
    assert.deepEqual(counts(), [0, 0]);
  });

  it('the waits of processes killed while they wait make room: 5,000 over the file\'s life, and the living still take turns, counted alone by notifyAll()', async () => {
    const { file, memory } = family();
    const { mutex, condition, counts } = conditionIn(memory);
    // Beside the 1,000 waits of the crowd before, a crowd has room for only 23 more of its own,
    // unless those are taken out.
    for (let crowds = 0; crowds < 5; crowds++) {
      const crowd = familyAgent(file, 'condition-crowd', 1000);
      assert.deepEqual(await withinLimit(reportOf(crowd, 'registered'), 'a crowd to wait'), { registered: 1000 });
      crowd.kill('SIGKILL');
      await exited(crowd);
    }
    assert.deepEqual(counts(), [1000, 0]);
    const turn = new Int32Array(memory.buffer, FAMILY.TURN, 1);
    const pair = [['sync', 0], ['mixed', 1]].map(([form, me]) => familyAgent(file, 'turns', 200, form, me, 2));
    await withinLimit(Promise.all(pair.map((c) => reportOf(c, 'turns'))), 'two parties to take their turns', 60_000);
    assert.equal(Atomics.load(turn, 0), 400);
    await Promise.all(pair.map(exited));

    const blocked = familyAgent(file, 'condition-wait', 0, 'sync');
    const theirs = reportOf(blocked, 'notified');
    await waitingIn(blocked, mutex);
    mutex.lock();
    const here = condition.waitAsync(mutex);
    mutex.lock();
    Atomics.store(new Int32Array(memory.buffer, FAMILY.CLOSED, 1), 0, 1);
    assert.equal(condition.notifyAll(), 2);
    mutex.unlock();
    assert.equal(await withinLimit(here, 'the Promise wait here'), true);
    mutex.unlock();
    assert.deepEqual(await withinLimit(theirs, 'the blocked wait there'), { notified: true });
    await exited(blocked);
    assert.deepEqual(counts(), [0, 0]);
  });

  it('a wait beyond 1,023 at once, of every process, is refused with ERR_PARKLOCK_TOO_MANY_WAITERS, keeping the mutex, until a process killed while it waits makes room', async () => {
    const { file, memory } = family();
    const { mutex, condition, counts } = conditionIn(memory);
    const crowd = familyAgent(file, 'condition-crowd', 1000);
    assert.deepEqual(await withinLimit(reportOf(crowd, 'registered'), 'the crowd to wait'), { registered: 1000 });
    mutex.lock();
    const here = [];
    for (let i = 0; i < 23; i++) {
      here.push(condition.waitAsync(mutex));
      mutex.lock();
    }
    assert.deepEqual(counts(), [1023, 0]);
    await assert.rejects(condition.waitAsync(mutex), { code: 'ERR_PARKLOCK_TOO_MANY_WAITERS' });
    assert.equal(mutex.isHeldByCurrentThread, true);
    assert.throws(() => condition.wait(mutex), { code: 'ERR_PARKLOCK_TOO_MANY_WAITERS' });
    assert.equal(mutex.isHeldByCurrentThread, true);
    mutex.unlock();
    const refused = familyAgent(file, 'condition-crowd', 1);
    assert.deepEqual(await withinLimit(reportOf(refused, 'registered'), 'the other process to be refused'),
      { registered: 0, refused: 'ERR_PARKLOCK_TOO_MANY_WAITERS' });
    await exited(refused);

    crowd.kill('SIGKILL');
    await exited(crowd);
    mutex.lock();
    here.push(condition.waitAsync(mutex));
    mutex.lock();
    assert.deepEqual(counts(), [24, 0]);
    assert.equal(condition.notifyAll(), 24);
    mutex.unlock();
    const notified = here.map((wait) => wait.then((value) => {
      mutex.unlock();
      return value;
    }));
    assert.deepEqual(await withinLimit(Promise.all(notified), 'the waits here'), here.map(() => true));
    assert.deepEqual(counts(), [0, 0]);
  });

  it('a notified wait re-acquires the mutex from a holder killed with SIGKILL, with the report, as itself', async () => {
    const { file, memory } = family();
    const { mutex, condition, counts } = conditionIn(memory);
    mutex.lock();
    const here = condition.waitAsync(mutex);
    const holder = familyAgent(file, 'condition-hold');
    await withinLimit(messageFrom(holder, (m) => m === 'holding'), 'the other process to notify and hold the mutex');
    holder.kill('SIGKILL');
    // The relay finds the holder dead, and the notified wait takes the mutex over, as this thread.
    await assert.rejects(withinLimit(here, 'the wait after the death'), { code: 'ERR_PARKLOCK_OWNER_DIED' });
    assert.equal(mutex.isHeldByCurrentThread, true);
    mutex.unlock();
    assert.deepEqual(counts(), [0, 0]);
    await exited(holder);
  });

  it('a Condition in sharedMemory() waits only with a Mutex there, refuses a corrupt word, and a Condition elsewhere may wait with a region Mutex', async () => {
    const { file, memory } = family();
    const { mutex, condition, word } = conditionIn(memory);
    const privateMutex = new Mutex();
    privateMutex.lock();
    assert.throws(() => condition.wait(privateMutex, 1), { code: 'ERR_INVALID_ARG_TYPE' });
    await assert.rejects(condition.waitAsync(privateMutex, { timeout: 1 }), { code: 'ERR_INVALID_ARG_TYPE' });
    privateMutex.unlock();

    Atomics.store(new Int32Array(memory.buffer, FAMILY.CONDITION, 1), 0, -1);
    mutex.lock();
    assert.throws(() => condition.wait(mutex, 1), { code: 'ERR_PARKLOCK_CORRUPT' });
    assert.equal(mutex.isHeldByCurrentThread, true);
    assert.equal(condition.notifyOne(), 0);
    assert.equal(condition.notifyAll(), 0);
    assert.equal(word(), -1);
    mutex.unlock();

    const local = new Condition();
    mutex.lock();
    const first = local.waitAsync(mutex);
    mutex.lock();
    const second = local.waitAsync(mutex);
    mutex.lock();
    assert.equal(local.notifyAll(), 2);
    mutex.unlock();
    assert.equal(await withinLimit(first, 'the first wait'), true);
    mutex.unlock();
    assert.equal(await withinLimit(second, 'the second wait'), true);
    mutex.unlock();

    // More blocked waits than notifyAll() wakes at once: it moves the rest onto the held region
    // mutex, whose unlocks hand it to each as the region identity it waits as.
    const go = new Int32Array(new SharedArrayBuffer(4));
    const workers = Array.from({ length: 8 }, () => new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       const { sharedMemory, Mutex, Condition } = require(workerData.lib);
       const mutex = new Mutex(sharedMemory(workerData.file, { create: false }), workerData.mutex);
       const condition = new Condition(workerData.condition);
       const go = new Int32Array(workerData.go);
       mutex.lock();
       parentPort.postMessage('waiting');
       while (Atomics.load(go, 0) === 0) condition.wait(mutex);
       mutex.unlock();
       parentPort.postMessage('done');`,
      { eval: true, workerData: { lib: path.join(__dirname, '..'), file, mutex: FAMILY.MUTEX, condition: local, go: go.buffer } },
    ));
    await withinLimit(Promise.all(workers.map((w) => messageFrom(w, (m) => m === 'waiting'))), 'the workers to wait');
    await waitFor(() => local.waiting === 8, 'every worker to wait');
    mutex.lock();
    Atomics.store(go, 0, 1);
    assert.equal(local.notifyAll(), 8);
    mutex.unlock();
    await withinLimit(Promise.all(workers.map((w) => messageFrom(w, (m) => m === 'done'))), 'every worker to unlock');
    await Promise.all(workers.map((w) => w.terminate()));
  });
});

describe('a thousand Mutexes of one region waited on at once, more words than one relay thread watches', { skip: !supported && 'no regions on this platform' }, () => {
  const COUNT = 1000;
  // How long the waiters of a dead holder get to hear of it: a few relay polls would do; more
  // means a waiter was never told.
  const ALL_TOLD_MS = 5_000;
  const indices = Array.from({ length: COUNT }, (_, i) => i);
  const children = [];
  before(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'parklock-region-'));
  });
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });
  after(() => removeTemporary(directory));

  function shuffled(list) {
    const copy = [...list];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [copy[i], copy[j]] = [copy[j], copy[i]];
    }
    return copy;
  }

  // A fresh region whose COUNT Mutexes another process holds, once it has reported so.
  async function allHeldElsewhere() {
    const file = path.join(directory, `many-${++serial}`);
    const words = manyWords(sharedMemory(file, { size: manyWords.bytes(COUNT) }), COUNT);
    const holder = fork(MANY_WORDS, [file, 'hold', String(COUNT)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(holder);
    await withinLimit(messageFrom(holder, (m) => m && m.held === COUNT), 'the holder to lock them all');
    return { file, holder, ...words };
  }

  // The holder hands off `released` one by one, each to its waiter before the next: while most
  // words still have waiters, a release of any word reaches its waiter only if this process
  // watches that word.
  async function handOff({ holder }, released) {
    const report = messageFrom(holder, (m) => m && (m.released !== undefined || m.stuck !== undefined));
    holder.send({ release: released });
    const { stuck } = await withinLimit(report, 'the hand-offs', 60_000);
    assert.equal(stuck, undefined, `the release of Mutex ${stuck} reached no waiter`);
  }

  // What a wait came to: 'acquired', or the code of the OwnerDiedError that handed it the lock.
  const outcomeOf = (error) => (error instanceof OwnerDiedError ? error.code : `unexpected ${error}`);

  function waitHere(shared, index) {
    return shared.mutexes[index].lockAsync().then(() => 'acquired', outcomeOf).then((outcome) => {
      acquired(shared, index);
      return outcome;
    });
  }

  // A worker thread blocked in lock() on each of `blocked`, once it has queued; their outcomes.
  async function blockedIn({ file, mutexes }, blocked) {
    const workers = blocked.map((index) => new Worker(MANY_WORDS, { workerData: { path: file, count: COUNT, index } }));
    const outcomes = workers.map((worker) => messageFrom(worker, (m) => m && m.outcome !== undefined).then((m) => m.outcome));
    await withinLimit(Promise.all(workers.map((worker) => messageFrom(worker))), 'the blocked workers to start');
    await waitFor(() => blocked.every((index) => mutexes[index].waiting === 1), 'the blocked workers to queue');
    return { workers, outcomes };
  }

  // Waits on every Mutex: threads blocked on `blocked` (the first half queued before the Promise
  // waits, the others after them, so that blocked waits are among the first words this process
  // watches and among the last), Promise waits here on the rest. The outcome of each, by index.
  async function waitOnAll(shared, blocked = []) {
    const outcomes = new Array(COUNT);
    const early = await blockedIn(shared, blocked.slice(0, blocked.length / 2));
    for (const index of indices) if (!blocked.includes(index)) outcomes[index] = waitHere(shared, index);
    const late = await blockedIn(shared, blocked.slice(blocked.length / 2));
    const workers = [...early.workers, ...late.workers];
    [...early.outcomes, ...late.outcomes].forEach((outcome, i) => (outcomes[blocked[i]] = outcome));
    assert.equal(shared.mutexes.reduce((sum, mutex) => sum + mutex.waiting, 0), COUNT);
    return { outcomes, stopWorkers: () => Promise.all(workers.map((worker) => worker.terminate())) };
  }

  // Every waiter acquired exactly once, and left its Mutex free.
  function assertEachAcquiredOnce(shared) {
    assert.deepEqual([...shared.counts], indices.map(() => 1));
    assert.equal(shared.mutexes.some((mutex) => mutex.isLocked || mutex.waiting > 0), false);
    assert.equal(shared.handOffs.available, 0);
  }

  async function handOffAllInRandomOrder(blocked) {
    const shared = await allHeldElsewhere();
    const { outcomes, stopWorkers } = await waitOnAll(shared, blocked);
    await handOff(shared, shuffled(indices));
    const settled = await withinLimit(Promise.all(outcomes), 'every waiter to report');
    await stopWorkers();
    assert.deepEqual(settled, indices.map(() => 'acquired'));
    assertEachAcquiredOnce(shared);
    shared.holder.send('exit');
    await exited(shared.holder);
  }

  it('another process releases them one by one in random order, and each Promise wait acquires exactly once', async () => {
    await handOffAllInRandomOrder();
  });

  it('threads blocked on some of them, among the first and the last words watched, acquire exactly once beside the Promise waits', async () => {
    await handOffAllInRandomOrder(shuffled(indices).slice(0, 8));
  });

  it('a holder SIGKILLed holding half of them is reported to every waiter of that half, whichever relay thread watches its word', async () => {
    const shared = await allHeldElsewhere();
    const order = shuffled(indices);
    const [released, kept] = [order.slice(0, COUNT / 2), order.slice(COUNT / 2)];
    // Blocked waits on both halves, queued first and last.
    const blocked = [released[0], kept[0], released[1], kept[1], released[2], kept[2], released[3], kept[3]];
    const { outcomes, stopWorkers } = await waitOnAll(shared, blocked);
    await handOff(shared, released);
    shared.holder.kill('SIGKILL');
    const settled = await withinLimit(Promise.all(outcomes), 'every waiter to acquire or hear of the death', ALL_TOLD_MS);
    await stopWorkers();
    const wasReleased = new Set(released);
    assert.deepEqual(settled, indices.map((i) => (wasReleased.has(i) ? 'acquired' : 'ERR_PARKLOCK_OWNER_DIED')));
    // The dead holder's half went by hand-off too, each to its waiter, which released a permit.
    assert.equal(shared.handOffs.tryAcquire(COUNT / 2), true);
    assertEachAcquiredOnce(shared);
    await exited(shared.holder);
  });
});

describe('sharedMemory() where regions are not built', { skip: supported && 'regions are built here' }, () => {
  it('throws ERR_PARKLOCK_UNSUPPORTED and creates no file', () => {
    const file = path.join(os.tmpdir(), `parklock-unsupported-${process.pid}`);
    assert.throws(() => sharedMemory(file), { code: 'ERR_PARKLOCK_UNSUPPORTED' });
    assert.equal(fs.existsSync(file), false);
  });
});
