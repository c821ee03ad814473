'use strict';
// Code written as the README shows (`await lock.executeLocked(fn)`, no try/catch) keeps working
// after a holder died inside fn: a process SIGKILLed or a worker terminated. The first run after
// the death is told, through fn's argument and a process warning; it runs fn holding the lock and
// releases it, so the runs after it find an ordinary lock and are not told again. The explicit
// forms still reject with an OwnerDiedError, which names the dead holder's process.
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { Worker } = require('node:worker_threads');
const { sharedMemory, Mutex, RWLock, OwnerDiedError } = require('../lib');
const native = require('../lib/native');
const { fixture, withinLimit, exitIfKeptAlive, removeTemporary } = require('./helpers');

exitIfKeptAlive();
const README_LOCK = fixture('readme_lock.mjs');
const WARNING_CODE = 'ERR_PARKLOCK_OWNER_DIED';

// A run of the README code: `exited` resolves with { code, reports, stderr } once it has ended,
// `holding` once fn has begun in a run that hangs. `end()` kills or terminates it.
function watch(stdout, stderr, whenEnded) {
  let out = '';
  let err = '';
  let heardHolding;
  const holding = new Promise((resolve) => {
    heardHolding = resolve;
  });
  stdout.on('data', (chunk) => {
    out += chunk;
    if (out.includes('"holding"')) heardHolding();
  });
  stderr.on('data', (chunk) => {
    err += chunk;
  });
  const exited = whenEnded.then((code) => ({
    code,
    reports: out.split('\n').filter(Boolean).map((line) => JSON.parse(line)),
    stderr: err,
  }));
  return { holding, exited };
}

function inProcess(settings) {
  const child = spawn(process.execPath, [README_LOCK, JSON.stringify(settings)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ended = new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? signal)));
  return { ...watch(child.stdout, child.stderr, ended), pid: child.pid, end: () => child.kill('SIGKILL') };
}

function inWorker(settings) {
  const worker = new Worker(README_LOCK, { workerData: settings, stdout: true, stderr: true });
  const { threadId } = worker;
  worker.on('error', () => {}); // a rejection the README code does not catch: its exit code says so
  const ended = new Promise((resolve) => worker.once('exit', resolve));
  return { ...watch(worker.stdout, worker.stderr, ended), threadId, end: () => worker.terminate() };
}

// Starts a run that dies inside fn, holding the lock; resolves with it once it has ended.
async function holderDies(start, settings) {
  const holder = start({ ...settings, form: 'locked', hang: true });
  await withinLimit(holder.holding, 'the holder to enter fn');
  holder.end();
  await withinLimit(holder.exited, 'the holder to end');
  return holder;
}

// Three runs of the README code after one another, each after the last has ended.
async function threeRuns(start, settings) {
  const runs = [];
  for (let i = 0; i < 3; i++) runs.push(await withinLimit(start(settings).exited, `run ${i + 1}`));
  return runs;
}

// Every run succeeded; only the first was told, through fn's argument and the warning.
function assertOnlyFirstTold(runs, holder) {
  runs.forEach((run, i) => {
    assert.equal(run.code, 0, `run ${i + 1} exits 0; stderr: ${run.stderr}`);
    assert.equal(run.reports.length, 1, `run ${i + 1} ran fn once`);
  });
  const [first, ...later] = runs;
  const { argument } = first.reports[0];
  assert.equal(argument.ownerDied, true, 'the first run is told');
  assert.equal(argument.pid, holder.pid, "it names the dead holder's process");
  assert.equal(argument.threadId, holder.threadId ?? null);
  assert.match(first.stderr, new RegExp(`\\[${WARNING_CODE}\\] OwnerDiedWarning`), 'and warned');
  for (const run of later) {
    assert.deepEqual(run.reports[0].argument, { ownerDied: false });
    assert.doesNotMatch(run.stderr, new RegExp(WARNING_CODE));
  }
}

describe('README code after a holder died inside executeLocked()', () => {
  describe('worker threads (a lock in a SharedArrayBuffer)', () => {
    for (const [kind, Lock, form] of [
      ['mutex', Mutex, 'locked'],
      ['rwlock', RWLock, 'locked'],
      ['rwlock', RWLock, 'shared'],
    ]) {
      it(`${kind}: a terminated holder, then three workers using execute${form === 'shared' ? 'Shared' : 'Locked'}()`, { timeout: 60_000 }, async () => {
        const lock = new Lock();
        const holder = await holderDies(inWorker, { lock, kind });
        assert.equal(lock.isLocked, true, 'the holder died holding it');
        const runs = await threeRuns(inWorker, { lock, kind, form });
        assertOnlyFirstTold(runs, { threadId: holder.threadId, pid: process.pid });
        assert.equal(lock.isLocked, false);
      });
    }
  });

  describe('processes (a lock in sharedMemory())', { skip: !native.regionsSupported && 'no regions on this platform' }, () => {
    let directory;
    let serial = 0;
    before(() => {
      directory = fs.mkdtempSync(path.join(os.tmpdir(), 'parklock-readme-'));
    });
    after(() => removeTemporary(directory));
    const file = () => path.join(directory, `region-${++serial}`);

    for (const [kind, form] of [
      ['mutex', 'locked'],
      ['rwlock', 'locked'],
      ['rwlock', 'shared'],
    ]) {
      it(`${kind}: a holder SIGKILLed, then three processes using execute${form === 'shared' ? 'Shared' : 'Locked'}()`, { timeout: 60_000 }, async () => {
        const settings = { path: file(), kind };
        const holder = await holderDies(inProcess, settings);
        const runs = await threeRuns(inProcess, { ...settings, form });
        assertOnlyFirstTold(runs, { pid: holder.pid, threadId: null });
      });
    }

    it('lockAsync() here after a holder in another process was SIGKILLed: an OwnerDiedError naming its pid', { timeout: 60_000 }, async () => {
      const settings = { path: file(), kind: 'mutex' };
      const mutex = new Mutex(sharedMemory(settings.path), 0);
      const holder = await holderDies(inProcess, settings);
      const error = await mutex.lockAsync().then(() => null, (failure) => failure);
      assert.ok(error instanceof OwnerDiedError, `expected an OwnerDiedError, got ${error}`);
      assert.equal(error.pid, holder.pid);
      assert.equal(error.threadId, null);
      assert.match(error.message, new RegExp(`of process ${holder.pid}\\)`));
      assert.equal(mutex.isHeldByCurrentThread, true, 'held through the error');
      error.guard.unlock();
      assert.deepEqual(await mutex.executeLocked((argument) => argument), { ownerDied: false });
    });
  });
});
