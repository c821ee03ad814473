'use strict';
// new LockManager(path): named locks that every process opening the path shares. Exact counting
// across processes, a holder SIGKILLed, query() across processes, a table left half-changed by a
// killed process, and the paths it refuses.
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { fork } = require('node:child_process');
const { LockManager, sharedMemory } = require('../lib');
const { fixture, withinLimit, waitFor, messageFrom, exited, removeTemporary } = require('./helpers');

const AGENT = fixture('named_lock_agent.js');
const supported = require('../lib/native').regionsSupported;
let dir;
let unique = 0;
const freshPath = () => path.join(dir, `table-${(unique += 1)}.locks`);

function startProcess(task) {
  const child = fork(AGENT, [JSON.stringify(task)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return { child, ended: exited(child) };
}

describe('LockManager across processes', { skip: !supported && 'no regions on this platform' }, () => {
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parklock-lock-manager-'));
  });
  after(() => removeTemporary(dir));

  it('4 processes and this one count exactly under one name', async () => {
    const file = freshPath();
    const counterPath = `${file}.counter`;
    const manager = new LockManager(file);
    const words = new Int32Array(sharedMemory(counterPath, { size: 8 }).buffer, 0, 1);
    const times = 500;
    const children = [0, 1, 2, 3].map((i) => startProcess({ kind: 'count', path: file, name: 'count', times, counterPath, blocking: i % 2 === 1 }));
    for (let i = 0; i < times; i += 1) {
      await manager.request('count', () => {
        words[0] += 1;
      });
    }
    await withinLimit(Promise.all(children.map(({ ended }) => ended)), 'the counting processes');
    assert.equal(words[0], 5 * times);
    assert.deepEqual(await manager.query(), { held: [], pending: [] });
  });

  it('a holder SIGKILLed: the next holder is told with its pid, and every later run works', async () => {
    for (const blocking of [false, true]) {
      const file = freshPath();
      const manager = new LockManager(file);
      const { child, ended } = startProcess({ kind: 'hold', path: file, name: 'job', blocking });
      const { pid } = await messageFrom(child, (message) => message.held);
      const { held } = await manager.query();
      assert.deepEqual(held.map((entry) => [entry.name, entry.pid]), [['job', pid]]);
      const next = startProcess({ kind: 'acquire', path: file, name: 'job' });
      const told = messageFrom(next.child, (message) => message.acquired);
      await messageFrom(next.child, (message) => message.queued);
      child.kill('SIGKILL');
      await ended;
      const message = await withinLimit(told, 'the next holder');
      assert.equal(message.ownerDied, true);
      assert.equal(message.deadOwner.pid, pid);
      await next.ended;
      for (let run = 0; run < 2; run += 1) {
        const later = startProcess({ kind: 'acquire', path: file, name: 'job', blocking });
        assert.equal((await messageFrom(later.child, (m) => m.acquired)).ownerDied, false);
        assert.equal(await later.ended, 0);
      }
      assert.equal(await manager.request('job', (lock) => lock.ownerDied), false);
    }
  });

  it('tryLock() and ifAvailable find a SIGKILLed holder gone at once, and say so', async () => {
    const file = freshPath();
    const manager = new LockManager(file);
    const { child, ended } = startProcess({ kind: 'hold', path: file, name: 'single' });
    const { pid } = await messageFrom(child, (message) => message.held);
    assert.equal(manager.tryLock('single'), null);
    assert.equal(await manager.request('single', { ifAvailable: true }, (lock) => lock), null);
    child.kill('SIGKILL');
    await ended;
    const guard = manager.tryLock('single');
    assert.notEqual(guard, null);
    assert.equal(guard.ownerDied, true);
    assert.equal(guard.deadOwner.pid, pid);
    guard.unlock();
    assert.equal(await manager.request('single', { ifAvailable: true }, (lock) => lock.ownerDied), false);
  });

  it('lock.signal aborts when a steal takes the name: from this process at once, from another while the callback runs', async () => {
    const manager = new LockManager(freshPath());
    let signal;
    const here = manager.request('taken', (lock) => {
      signal = lock.signal;
      return new Promise(() => {});
    });
    await waitFor(() => signal !== undefined, 'the grant');
    await manager.request('taken', { steal: true }, () => {});
    assert.equal(signal.aborted, true);
    assert.equal(signal.reason.name, 'AbortError');
    await assert.rejects(here, { name: 'AbortError' });

    const file = freshPath();
    const shared = new LockManager(file);
    const seen = await shared.request('taken', async (lock) => {
      const stealer = startProcess({ kind: 'steal', path: file, name: 'taken' });
      await messageFrom(stealer.child, (message) => message.stole);
      await withinLimit(new Promise((resolve) => lock.signal.addEventListener('abort', resolve)), 'the signal');
      await stealer.ended;
      return lock.signal.reason.name;
    }).catch((error) => `rejected with ${error.name}`);
    assert.equal(seen, 'rejected with AbortError');
  });

  it('query() sees the held and pending requests of other processes', async () => {
    const file = freshPath();
    const manager = new LockManager(file);
    const holder = startProcess({ kind: 'hold', path: file, name: 'shared', mode: 'shared' });
    const { pid } = await messageFrom(holder.child, (message) => message.held);
    const guard = manager.lock('shared', { mode: 'shared' });
    const waiter = startProcess({ kind: 'acquire', path: file, name: 'shared' });
    const acquired = messageFrom(waiter.child, (message) => message.acquired);
    await messageFrom(waiter.child, (message) => message.queued);
    const { held, pending } = await manager.query();
    assert.deepEqual(held.map((entry) => entry.pid).sort(), [pid, process.pid].sort());
    assert.deepEqual(pending.map((entry) => [entry.mode, entry.pid]), [['exclusive', waiter.child.pid]]);
    assert.equal(pending[0].clientId, `${waiter.child.pid}:0`);
    guard.unlock();
    holder.child.kill('SIGKILL');
    await holder.ended;
    assert.equal((await withinLimit(acquired, 'the waiter')).ownerDied, true);
    await waiter.ended;
    await waitFor(async () => (await manager.query()).held.length === 0, 'the killed holder to be freed');
  });

  it('a process killed in the middle of a change leaves a table the next user rebuilds', async () => {
    const file = freshPath();
    const manager = new LockManager(file);
    const holder = startProcess({ kind: 'hold', path: file, name: 'kept' });
    await messageFrom(holder.child, (message) => message.held);
    const breaker = startProcess({ kind: 'breakTable', path: file });
    await messageFrom(breaker.child, (message) => message.broken);
    breaker.child.kill('SIGKILL');
    await breaker.ended;
    // With its hash chains gone, a table that trusted them would grant the held name again.
    assert.equal(manager.tryLock('kept'), null);
    assert.deepEqual((await manager.query()).held.map((entry) => entry.name), ['kept']);
    holder.child.kill('SIGKILL');
    await holder.ended;
    assert.equal(await withinLimit(manager.request('kept', (lock) => lock.ownerDied), 'the name'), true);
  });

  it('two processes each blocked for the name the other holds: one gives up with the cycle', async () => {
    const file = freshPath();
    const counterPath = `${file}.ready`;
    const children = [
      startProcess({ kind: 'crossLock', path: file, first: 'a', second: 'b', counterPath, agents: 2 }),
      startProcess({ kind: 'crossLock', path: file, first: 'b', second: 'a', counterPath, agents: 2 }),
    ];
    const reports = await withinLimit(
      Promise.all(children.map(({ child }) => messageFrom(child, (message) => message.granted || message.code))),
      'the deadlock to be found',
    );
    await Promise.all(children.map(({ ended }) => ended));
    const refused = reports.find((report) => report.code === 'ERR_PARKLOCK_DEADLOCK');
    assert.ok(refused !== undefined, JSON.stringify(reports));
    assert.deepEqual(refused.cycle.map((step) => step.pid).sort(), children.map(({ child }) => child.pid).sort());
    assert.deepEqual(await new LockManager(file).query(), { held: [], pending: [] });
  });

  it('refuses paths it cannot use, with the errors of node:fs and parklock', () => {
    assert.throws(() => new LockManager(path.join(dir, 'missing', 'x.locks')), { code: 'ENOENT' });
    assert.throws(() => new LockManager(dir), { code: 'EISDIR' });
    const garbage = path.join(dir, 'garbage.locks');
    fs.writeFileSync(garbage, 'not a lock table at all');
    assert.throws(() => new LockManager(garbage), { code: 'ERR_PARKLOCK_REGION_INVALID' });
    const region = path.join(dir, 'region.locks');
    const memory = sharedMemory(region, { size: 16 << 20 });
    new Int32Array(memory.buffer)[1] = 12345;
    assert.throws(() => new LockManager(region), { code: 'ERR_PARKLOCK_NOT_A_LOCK_FILE' });
    const small = path.join(dir, 'small.locks');
    sharedMemory(small, { size: 4096 });
    assert.throws(() => new LockManager(small), { code: 'ERR_PARKLOCK_NOT_A_LOCK_FILE' });
    const link = path.join(dir, 'link.locks');
    fs.symlinkSync(freshPath(), link);
    // Where the system shows it as one: Wine's symbolic links read as missing.
    if (fs.lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink()) {
      assert.throws(() => new LockManager(link), { code: 'ELOOP' });
    }
    assert.throws(() => new LockManager(''), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => new LockManager(freshPath(), { mode: 'rw' }), { code: 'ERR_INVALID_ARG_TYPE' });
    if (process.getuid?.() === 0) {
      const foreign = freshPath();
      new LockManager(foreign);
      fs.chownSync(foreign, 12345, 12345);
      assert.throws(() => new LockManager(foreign), { code: 'ERR_PARKLOCK_REGION_OWNER' });
    }
  });

  it('creates its file with mode 0o600 unless told otherwise', {
    skip: process.platform === 'win32' && "Windows has no file modes: a file's access is its directory's ACL",
  }, () => {
    const file = freshPath();
    new LockManager(file);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    const shared = freshPath();
    new LockManager(shared, { mode: 0o640 });
    assert.equal(fs.statSync(shared).mode & 0o777 & ~process.umask(), 0o640 & ~process.umask());
    assert.equal(new LockManager(file).path, file);
  });
});
