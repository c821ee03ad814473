'use strict';
// PostgresLockManager: the named locks of `locks` and `new LockManager(path)` (request(),
// tryLock(), query()) for processes on any number of machines that share a PostgreSQL database.
// A name is a session-level advisory lock on (key space, the name's id in a table of names)
// (./schema.js), so the server frees it when the holding session ends, however it ends. Each
// request holds a session of the pool from its start until it releases (./holding.js).
const os = require('node:os');
const { invalidArgType } = require('../../errors');
const { readProperty } = require('../../property');
const { validateInteger } = require('../../validate');
const { isAborted, reasonOf } = require('../../signals');
const { rejectingMethods } = require('../../promise_form');
const { validateName, validateOptions, validateRequest, TRY_LOCK_OPTIONS } = require('../request_options');
const { loadPg } = require('./load_pg');
const { statementsFor } = require('./schema');
const { acquire, release } = require('./holding');
const { PostgresLock, PostgresLockGuard, loseLock } = require('./postgres_lock');
const { noBlockingLock, lockLost, serverError } = require('./postgres_errors');

const DEFAULT_HEARTBEAT_MS = 5000;
// The pool made from a connection config: one session per request held or waiting.
const DEFAULT_POOL_SIZE = 100;

function isPool(value) {
  return value !== null && typeof value === 'object' && typeof value.connect === 'function' &&
    typeof value.query === 'function' && typeof value.totalCount === 'number';
}

function validateManagerOptions(options) {
  if (options === undefined) return { schema: 'public', heartbeatMs: DEFAULT_HEARTBEAT_MS };
  if (options === null || typeof options !== 'object') throw invalidArgType('options', 'an object', options);
  const schema = readProperty(options, 'schema', 'options') ?? 'public';
  if (typeof schema !== 'string' || schema.length === 0) throw invalidArgType('options.schema', 'a non-empty string', schema);
  const heartbeat = readProperty(options, 'heartbeatMs', 'options');
  const heartbeatMs = heartbeat === undefined || heartbeat === Infinity ? heartbeat ?? DEFAULT_HEARTBEAT_MS : validateInteger(heartbeat, 'options.heartbeatMs', 1, 2 ** 31 - 1);
  return { schema, heartbeatMs };
}

// The pool of the sessions: the caller's, or one made from a connection string or config.
function poolOf(pg, source) {
  if (isPool(source)) return { pool: source, owned: false };
  if (typeof source === 'string') source = { connectionString: source };
  if (source === null || typeof source !== 'object') {
    throw invalidArgType('poolOrConfig', 'a pg.Pool, a connection string or a pg connection config', source);
  }
  // TCP keepalive: a peer that vanished is found by the heartbeat, and by TCP where no statement
  // runs (heartbeatMs: Infinity).
  const pool = new pg.Pool({ max: DEFAULT_POOL_SIZE, keepAlive: true, ...source });
  // An idle session that the server ends (a restart) must not crash the process; the next
  // request gets a new one.
  pool.on('error', () => {});
  return { pool, owned: true };
}

let contextOf;

class PostgresLockManager {
  #ctx;
  #owned;

  // new PostgresLockManager(poolOrConfig, { schema = 'public', heartbeatMs = 5000 })
  constructor(poolOrConfig, options) {
    const { schema, heartbeatMs } = validateManagerOptions(options);
    const pg = loadPg();
    const { pool, owned } = poolOf(pg, poolOrConfig);
    this.#owned = owned;
    const statements = statementsFor(schema, pg.escapeIdentifier ?? ((text) => `"${text.replace(/"/g, '""')}"`));
    const ctx = {
      pool,
      statements,
      heartbeatMs,
      host: os.hostname(),
      ids: new Map(),
      keySpace: 0,
      // Prepared statements are per session, and shared by the managers of a pool: named by schema.
      prefix: `parklock:${schema}:`,
      ready: null,
    };
    let setup;
    ctx.ready = () => (setup ??= prepare(ctx).catch((error) => {
      setup = undefined;
      throw error;
    }));
    this.#ctx = ctx;
  }

  static {
    contextOf = (manager) => {
      if (manager === null || typeof manager !== 'object' || !(#ctx in manager)) {
        throw invalidArgType('this', 'a PostgresLockManager', manager);
      }
      return manager.#ctx;
    };
  }

  // The Web Locks request(): request(name, callback) or request(name, options, callback).
  request(name, options, callback) {
    const request = validateRequest(name, options, callback);
    if (isAborted(request.signal)) return Promise.reject(reasonOf(request.signal));
    return runHolding(contextOf(this), request);
  }

  lock() {
    throw noBlockingLock();
  }

  // A Promise of a guard if `name` can be had now, else of null; never waits for a holder.
  tryLock(name, options) {
    name = validateName(name);
    const { mode } = validateOptions(options, TRY_LOCK_OPTIONS);
    const ctx = contextOf(this);
    return acquire(ctx, name, mode, { ifAvailable: true, steal: false, signal: undefined, timeout: Infinity }).then((holding) => {
      if (holding === null) return null;
      const guard = new PostgresLockGuard(name, mode, holding.token, holding.deadOwner, async () => {
        const lost = await release(ctx, holding, mode);
        if (lost !== undefined) throw lockLost(name, lost);
      });
      holding.session.watch((cause) => loseLock(guard, lockLost(name, cause)), ctx.heartbeatMs);
      return guard;
    });
  }

  // { held, pending }: held entries { name, mode, clientId, host, pid, backendPid, token } of the
  // sessions that hold a name now; pending ones { name, mode, clientId, backendPid } of the
  // sessions waiting (what a waiter is, beyond its session, is known only once it holds).
  async query() {
    const ctx = contextOf(this);
    let held;
    let pending;
    try {
      await ctx.ready();
      [{ rows: held }, { rows: pending }] = await Promise.all([
        ctx.pool.query({ text: ctx.statements.held, values: [ctx.keySpace] }),
        ctx.pool.query({ text: ctx.statements.pending, values: [ctx.keySpace] }),
      ]);
    } catch (cause) {
      throw serverError(null, cause);
    }
    return {
      held: held.map((row) => ({
        name: row.name,
        mode: row.mode,
        clientId: `${row.host}:${row.pid}`,
        host: row.host,
        pid: row.pid,
        backendPid: row.backend_pid,
        token: Number(row.token),
      })),
      pending: pending.map((row) => ({ name: row.name, mode: row.mode, clientId: `backend:${row.backend_pid}`, backendPid: row.backend_pid })),
    };
  }

  // Closes the pool this manager made from a connection config; a pool it was given is the
  // caller's to end.
  async end() {
    const ctx = contextOf(this);
    if (this.#owned) {
      this.#owned = false;
      await ctx.pool.end();
    }
  }
}

rejectingMethods(PostgresLockManager.prototype, 'request', 'tryLock', 'query', 'end');

// Makes the tables where they are missing, and learns the key space.
async function prepare(ctx) {
  const session = await ctx.pool.connect();
  let failed = true;
  try {
    const { rows } = await session.query(ctx.statements.exists);
    if (!rows[0].made) {
      for (const statement of ctx.statements.make) await session.query(statement);
    }
    const { rows: [{ oid }] } = await session.query(ctx.statements.keySpace);
    // The advisory key is a signed 32-bit integer; pg_locks shows it as the unsigned OID.
    ctx.keySpace = Number(oid) | 0;
    failed = false;
  } finally {
    session.release(failed ? true : undefined);
  }
}

// request() once its arguments are checked: holds the name while the callback runs, and settles
// with the callback's result, or rejects with ERR_PARKLOCK_LOCK_LOST where the session ended in
// the meantime (the callback ran without the lock from that moment).
async function runHolding(ctx, { name, callback, mode, ifAvailable, steal, signal, timeout }) {
  const holding = await acquire(ctx, name, mode, { ifAvailable, steal, signal, timeout });
  if (holding === null) return callback(null);
  const lock = new PostgresLock(name, mode, holding.token, holding.deadOwner);
  holding.session.watch((cause) => loseLock(lock, lockLost(name, cause)), ctx.heartbeatMs);
  let lost;
  try {
    return await callback(lock);
  } finally {
    lost = await release(ctx, holding, mode);
    if (lost !== undefined) {
      const error = lockLost(name, lost);
      loseLock(lock, error);
      throw error; // eslint-disable-line no-unsafe-finally
    }
  }
}

module.exports = { PostgresLockManager, PostgresLock, PostgresLockGuard };
