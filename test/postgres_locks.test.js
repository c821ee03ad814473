'use strict';
// PostgresLockManager against a real PostgreSQL server: PARKLOCK_PG_URL, else a throwaway
// cluster of this file's own (./postgres/cluster.js). Exact counting across processes, a holder
// SIGKILLed and one whose session is terminated, shared and exclusive modes, steal, abort and
// timeout while queued, many names, a server restart under waiting requests, and bad input.
// Without PostgreSQL binaries every test skips, saying why; under CI=true on Linux that fails.
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { fork, spawnSync } = require('node:child_process');
const { PostgresLockManager } = require('../lib');
const { startServer, urlOf } = require('./postgres/cluster');
const { fixture, withinLimit, waitFor, messageFrom, exited, tick } = require('./helpers');

const AGENT = fixture('postgres_lock_agent.js');
const server = startServer();
let pg;
let admin;
let manager;

function startProcess(task) {
  const child = fork(AGENT, [JSON.stringify({ config: server.config, ...task })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return { child, ended: exited(child) };
}

// A session of the test's own, for what the tests check behind the manager's back.
async function connectAdmin() {
  const client = new pg.Client(server.config);
  // The restart test ends every session: this one's end is expected there.
  client.on('error', () => {});
  await client.connect();
  return client;
}

// Polls an async predicate until it holds; a hang fails after the helpers' limit.
async function eventually(predicate, what) {
  await withinLimit(
    (async () => {
      while (!(await predicate())) await tick(20);
    })(),
    what,
  );
}

const rejection = (promise) => promise.then(() => assert.fail('resolved'), (error) => error);

it('parklock loads and works without pg; only making a PostgresLockManager needs it', () => {
  const program = `const p = require(${JSON.stringify(path.join(__dirname, '..', 'lib'))});
    p.locks.request('x', () => {});
    try { new p.PostgresLockManager('postgres://localhost/db'); } catch (error) { console.log(error.code); }`;
  const result = spawnSync(process.execPath, ['-r', fixture('without_pg.js'), '-e', program], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stdout.trim(), 'ERR_PARKLOCK_PG_MISSING');
});

it('has a PostgreSQL server to test against', { skip: server.skip }, () => {
  assert.equal(server.failure, undefined, server.failure);
});

describe('PostgresLockManager', { skip: server.skip ?? server.failure }, () => {
  before(async () => {
    pg = require('pg');
    admin = await connectAdmin();
    manager = new PostgresLockManager(server.config, { heartbeatMs: 500 });
  });
  after(async () => {
    await manager?.end();
    await admin?.end();
    server.cluster?.stop();
  });

  it('4 processes × 2,000 requests count exactly under one name, in a counter in the database', async () => {
    await admin.query('CREATE TABLE IF NOT EXISTS parklock_test_counter (id int PRIMARY KEY, n int NOT NULL)');
    await admin.query('INSERT INTO parklock_test_counter VALUES (1, 0) ON CONFLICT (id) DO UPDATE SET n = 0');
    const times = 2000;
    const before = await manager.request('count', (lock) => lock.token);
    const children = [0, 1, 2, 3].map(() => startProcess({ kind: 'count', name: 'count', times }));
    const codes = await withinLimit(Promise.all(children.map(({ ended }) => ended)), 'the counting processes', 60_000);
    assert.deepEqual(codes, [0, 0, 0, 0]);
    const { rows } = await admin.query('SELECT n FROM parklock_test_counter WHERE id = 1');
    assert.equal(rows[0].n, 4 * times);
    assert.equal(await manager.request('count', (lock) => lock.token), before + 4 * times + 1);
    assert.deepEqual(await manager.query(), { held: [], pending: [] });
  });

  it('a holder SIGKILLed: the next holder sees ownerDied with its host and pid, and a larger token', async () => {
    const holder = startProcess({ kind: 'hold', name: 'job' });
    const { pid, token } = await messageFrom(holder.child, (message) => message.held);
    const next = startProcess({ kind: 'acquire', name: 'job' });
    const told = messageFrom(next.child, (message) => message.acquired);
    await messageFrom(next.child, (message) => message.queued);
    const { pending } = await manager.query();
    assert.deepEqual(pending.map((entry) => entry.name), ['job']);
    holder.child.kill('SIGKILL');
    await holder.ended;
    const message = await withinLimit(told, 'the next holder');
    assert.equal(message.ownerDied, true);
    assert.equal(message.deadOwner.pid, pid);
    assert.equal(message.deadOwner.host, require('node:os').hostname());
    assert.equal(message.deadOwner.token, token);
    assert.ok(message.token > token);
    assert.equal(await next.ended, 0);
    // Reported once: the holder after that one is told nothing.
    assert.equal(await manager.request('job', (lock) => lock.ownerDied), false);
  });

  it('pg_terminate_backend of the holding session: lock.signal aborts, the request rejects, the next holder is granted', async () => {
    let signal;
    const holding = rejection(
      manager.request('terminated', (lock) => {
        signal = lock.signal;
        return new Promise((resolve) => signal.addEventListener('abort', resolve));
      }),
    );
    await waitFor(() => signal !== undefined, 'the grant');
    const { held } = await manager.query();
    assert.equal(held.length, 1);
    assert.equal(held[0].pid, process.pid);
    await admin.query('SELECT pg_terminate_backend($1)', [held[0].backendPid]);
    const error = await withinLimit(holding, 'the holder to hear of it');
    assert.equal(error.code, 'ERR_PARKLOCK_LOCK_LOST');
    assert.equal(signal.aborted, true);
    assert.equal(signal.reason.code, 'ERR_PARKLOCK_LOCK_LOST');
    const next = await withinLimit(manager.request('terminated', (lock) => lock), 'the next holder');
    assert.equal(next.ownerDied, true);
    assert.equal(next.deadOwner.pid, process.pid);
    assert.equal(next.deadOwner.backendPid, held[0].backendPid);
  });

  it('shared holders hold together; an exclusive request waits for all of them, excludes them, and goes before later shared ones', async () => {
    const events = [];
    let releaseShared;
    const sharedDone = new Promise((resolve) => (releaseShared = resolve));
    const shared = [1, 2].map((i) =>
      manager.request('modes', { mode: 'shared' }, async (lock) => {
        events.push(`shared ${i} in`);
        await sharedDone;
        events.push(`shared ${i} out`);
        return lock.token;
      }),
    );
    await waitFor(() => events.length === 2, 'both shared holders');
    const exclusive = manager.request('modes', async (lock) => {
      events.push('exclusive in');
      assert.equal(await manager.tryLock('modes', { mode: 'shared' }), null);
      return lock.token;
    });
    await tick(300);
    // Behind a waiting exclusive request, shared ones wait too: first come, first served.
    assert.equal(await manager.tryLock('modes', { mode: 'shared' }), null);
    const later = manager.request('modes', { mode: 'shared' }, () => events.push('later shared in'));
    await tick(300);
    const { held, pending } = await manager.query();
    assert.deepEqual(held.map((entry) => entry.mode), ['shared', 'shared']);
    assert.deepEqual(pending.map((entry) => [entry.name, entry.mode]).sort(), [['modes', 'exclusive'], ['modes', 'shared']]);
    assert.deepEqual(events.sort(), ['shared 1 in', 'shared 2 in']);
    releaseShared();
    const tokens = await Promise.all(shared);
    const last = await exclusive;
    await later;
    assert.notEqual(tokens[0], tokens[1]);
    assert.ok(last > Math.max(...tokens));
    assert.deepEqual(events.slice(-2), ['exclusive in', 'later shared in']);
  });

  it('abort and timeout while queued take nothing', async () => {
    let release;
    const holding = manager.request('queued', (lock) => new Promise((resolve) => (release = () => resolve(lock.token))));
    await waitFor(() => release !== undefined, 'the grant');
    const controller = new AbortController();
    const aborted = rejection(manager.request('queued', { signal: controller.signal }, () => assert.fail('granted')));
    const timedOut = rejection(manager.request('queued', { timeout: 200 }, () => assert.fail('granted')));
    await tick(100);
    controller.abort();
    assert.equal((await aborted).name, 'AbortError');
    const timeout = await timedOut;
    assert.equal(timeout.name, 'TimeoutError');
    assert.equal(timeout.code, 'ERR_PARKLOCK_TIMEOUT');
    // Timeouts that end at every moment of a request's start: before, while and after its
    // statements reach the server. None hangs, none is granted.
    const quick = await withinLimit(
      Promise.all(Array.from({ length: 20 }, (_, i) => rejection(manager.request('queued', { timeout: i % 10 }, () => assert.fail('granted'))))),
      'the quick timeouts',
    );
    assert.ok(quick.every((error) => error.code === 'ERR_PARKLOCK_TIMEOUT'), quick.map((error) => error.code).join());
    // A session closed while it waited leaves the server's queue as its process exits.
    await eventually(async () => (await manager.query()).pending.length === 0, 'the closed sessions to leave the queue');
    release();
    const token = await holding;
    const guard = await manager.tryLock('queued');
    assert.notEqual(guard, null);
    assert.equal(guard.token, token + 1);
    assert.equal(guard.ownerDied, false);
    await guard.unlock();
    assert.deepEqual(await manager.query(), { held: [], pending: [] });
  });

  it('steal ends the holding session: its signal aborts, the stealer holds, nobody is told of a death', async () => {
    let signal;
    const victim = rejection(
      manager.request('stolen', (lock) => {
        signal = lock.signal;
        return new Promise((resolve) => signal.addEventListener('abort', resolve));
      }),
    );
    await waitFor(() => signal !== undefined, 'the grant');
    const stealer = await withinLimit(manager.request('stolen', { steal: true }, (lock) => lock), 'the steal');
    assert.equal(stealer.ownerDied, false);
    assert.equal(signal.aborted, true);
    assert.equal(signal.reason.code, 'ERR_PARKLOCK_LOCK_LOST');
    assert.equal((await withinLimit(victim, 'the stolen holder')).code, 'ERR_PARKLOCK_LOCK_LOST');
  });

  it('10,000 distinct names, each granted with token 1 and released', async () => {
    const own = new PostgresLockManager(server.config, { schema: 'many_names' });
    try {
      const names = Array.from({ length: 10_000 }, (_, i) => `name-${i}`);
      let next = 0;
      const tokens = [];
      const lane = async () => {
        while (next < names.length) {
          const name = names[next++];
          tokens.push(await own.request(name, (lock) => lock.token));
        }
      };
      await withinLimit(Promise.all(Array.from({ length: 16 }, lane)), 'the names', 60_000);
      assert.equal(tokens.length, names.length);
      assert.ok(tokens.every((token) => token === 1));
      const { rows } = await admin.query('SELECT count(*)::int AS n FROM many_names.parklock_names');
      assert.equal(rows[0].n, names.length);
      assert.deepEqual(await own.query(), { held: [], pending: [] });
    } finally {
      await own.end();
    }
  });

  it('works with a pg.Pool: the holding session stays checked out until release', async () => {
    const pool = new pg.Pool({ ...server.config, max: 3 });
    const own = new PostgresLockManager(pool);
    await own.request('pooled', async () => {
      assert.equal(pool.totalCount - pool.idleCount, 1);
    });
    assert.equal(pool.totalCount - pool.idleCount, 0);
    await own.end();
    assert.equal((await pool.query('SELECT 1 AS one')).rows[0].one, 1);
    await pool.end();
  });

  it('a server restart while requests wait: each gets a coded error or is granted, none hangs', { skip: server.cluster === null && 'PARKLOCK_PG_URL is a server this test cannot restart' }, async () => {
    const own = new PostgresLockManager(server.config);
    let signal;
    const holding = own.request('restart', (lock) => {
      signal = lock.signal;
      return new Promise((resolve) => signal.addEventListener('abort', resolve));
    });
    const holderOutcome = rejection(holding);
    await waitFor(() => signal !== undefined, 'the grant');
    const waiting = [0, 1, 2].map(() => own.request('restart', () => 'granted').catch((error) => error.code));
    await tick(300);
    server.cluster.halt();
    server.cluster.start();
    const outcomes = await withinLimit(Promise.all(waiting), 'the waiting requests');
    for (const outcome of outcomes) assert.ok(['ERR_PARKLOCK_POSTGRES', 'granted'].includes(outcome), outcome);
    assert.equal((await withinLimit(holderOutcome, 'the holder')).code, 'ERR_PARKLOCK_LOCK_LOST');
    assert.equal(signal.aborted, true);
    // The holder's session ended with the server while it held the name: the next holder is told.
    const after = await own.request('restart', (lock) => lock);
    assert.equal(after.ownerDied, true);
    assert.equal(after.deadOwner.pid, process.pid);
    await own.end();
    await admin.end();
    admin = await connectAdmin();
  });

  it('runs the example that uses the same application code with all three managers', () => {
    const example = path.join(__dirname, '..', 'examples', 'same_code_three_managers.js');
    const outputs = [['threads'], ['file'], ['postgres', urlOf(server.config)]].map((args) => {
      const result = spawnSync(process.execPath, [example, ...args], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(result.status, 0, result.stderr);
      return result.stdout.trim();
    });
    assert.deepEqual(outputs, ['threads: balance 200 of 200', 'file: balance 200 of 200', 'postgres: balance 200 of 200']);
  });

  it('refuses bad input with coded errors, and has no blocking lock()', async () => {
    await assert.rejects(manager.request('-reserved', () => {}), { name: 'NotSupportedError' });
    await assert.rejects(manager.request('x', { steal: true, ifAvailable: true }, () => {}), { name: 'NotSupportedError' });
    await assert.rejects(manager.request('x', { mode: 'shared', steal: true }, () => {}), { name: 'NotSupportedError' });
    await assert.rejects(manager.request('x', { mode: 'both' }, () => {}), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    await assert.rejects(manager.request('x', { timeout: -1 }, () => {}), { code: 'ERR_OUT_OF_RANGE' });
    await assert.rejects(manager.request('x', 'not a callback'), { code: 'ERR_INVALID_ARG_TYPE' });
    await assert.rejects(manager.request('x'.repeat(300), () => {}), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
    await assert.rejects(manager.request('x', { signal: AbortSignal.abort() }, () => {}), { name: 'AbortError' });
    await assert.rejects(manager.tryLock('-x'), { name: 'NotSupportedError' });
    await assert.rejects(PostgresLockManager.prototype.query.call({}), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => manager.lock('x'), { code: 'ERR_PARKLOCK_UNSUPPORTED', message: /round trip/ });
    assert.throws(() => new PostgresLockManager(42), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => new PostgresLockManager(server.config, { schema: '' }), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => new PostgresLockManager(server.config, { heartbeatMs: 0 }), { code: 'ERR_OUT_OF_RANGE' });
    const unreachable = new PostgresLockManager({ host: '/nonexistent', port: 1, connectionTimeoutMillis: 2000 });
    await assert.rejects(unreachable.request('x', () => {}), { code: 'ERR_PARKLOCK_POSTGRES' });
    await assert.rejects(unreachable.tryLock('x'), { code: 'ERR_PARKLOCK_POSTGRES' });
    await assert.rejects(unreachable.query(), { code: 'ERR_PARKLOCK_POSTGRES', message: /^query\(\) failed/ });
    await unreachable.end();
  });
});
