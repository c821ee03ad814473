// PostgresLockManager (lib/named_locks/postgres/): the named locks of `locks` and
// `new LockManager(path)` for processes on any number of machines that share a PostgreSQL
// database, over session-level advisory locks. Needs node-postgres (`pg`), an optional peer
// dependency, loaded when the first manager is made.
/// <reference lib="esnext.disposable" />
import type { LockMode, LockRequestOptions, NamedTryLockOptions } from './named_locks.js';

/** The holder whose session ended while it held the name. */
export interface PostgresLockOwner {
  /** os.hostname() of its machine. */
  readonly host: string;
  /** Its process's pid on that machine. */
  readonly pid: number;
  /** The pid of its session's server process. */
  readonly backendPid: number;
  /** The fencing token of its grant. */
  readonly token: number;
}

/** What request()'s callback receives (null there with `ifAvailable` when the name is taken). */
export interface PostgresLock {
  readonly name: string;
  readonly mode: LockMode;
  /**
   * The fencing token: the number of grants of this name so far, over every client of the
   * database, this one included. A later grant of the name always has a larger one.
   */
  readonly token: number;
  /** The name's previous holder's session ended while it held the name. */
  readonly ownerDied: boolean;
  readonly deadOwner: PostgresLockOwner | null;
  /**
   * Aborts when the holding session ends (the lock is then gone): a lost connection, a server
   * restart, pg_terminate_backend, or a `{ steal: true }` request. Its reason is the
   * ERR_PARKLOCK_LOCK_LOST error the request then rejects with.
   */
  readonly signal: AbortSignal;
}

/** What tryLock() resolves to: the PostgresLock, and an unlock() to await. */
export interface PostgresLockGuard extends PostgresLock {
  readonly released: boolean;
  /** Releases once; later calls resolve at once. Rejects with ERR_PARKLOCK_LOCK_LOST where the session ended. */
  unlock(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** One request, as query() reports it. */
export interface PostgresLockInfo {
  readonly name: string;
  readonly mode: LockMode;
  /** `${host}:${pid}` for a holder, `backend:${backendPid}` for a waiter. */
  readonly clientId: string;
  readonly backendPid: number;
  /** Holders only. */
  readonly host?: string;
  readonly pid?: number;
  readonly token?: number;
}

export interface PostgresLockManagerSnapshot {
  held: PostgresLockInfo[];
  pending: PostgresLockInfo[];
}

export interface PostgresLockManagerOptions {
  /** The schema of the tables parklock_names and parklock_holders (default 'public'), made on first use. */
  schema?: string;
  /** Milliseconds between the statements that check a holding session (default 5000; Infinity: none). */
  heartbeatMs?: number;
}

/** Just the part of pg.Pool the manager uses, so that these types do not need pg's. */
export interface PostgresPool {
  connect(): Promise<unknown>;
  query(...args: any[]): Promise<unknown>;
  readonly totalCount: number;
}

export class PostgresLockManager {
  /**
   * A pg.Pool (each request holds one of its sessions from its start until its release), or a
   * connection string or pg config, from which the manager makes a pool of its own (max 100 unless
   * the config says otherwise). Throws ERR_PARKLOCK_PG_MISSING where `pg` is not installed.
   */
  constructor(poolOrConfig: PostgresPool | string | Record<string, unknown>, options?: PostgresLockManagerOptions);
  request<T>(name: string, callback: (lock: PostgresLock) => T | PromiseLike<T>): Promise<Awaited<T>>;
  request<T>(
    name: string,
    options: LockRequestOptions & { ifAvailable: true },
    callback: (lock: PostgresLock | null) => T | PromiseLike<T>,
  ): Promise<Awaited<T>>;
  request<T>(
    name: string,
    options: LockRequestOptions & { ifAvailable?: false },
    callback: (lock: PostgresLock) => T | PromiseLike<T>,
  ): Promise<Awaited<T>>;
  request<T>(name: string, options: LockRequestOptions, callback: (lock: PostgresLock | null) => T | PromiseLike<T>): Promise<Awaited<T>>;
  /** Always throws ERR_PARKLOCK_UNSUPPORTED: a thread cannot block on a network round trip. */
  lock(name: string, options?: unknown): never;
  /** Resolves to a guard if `name` can be had now, else to null; never waits for a holder. */
  tryLock(name: string, options?: NamedTryLockOptions): Promise<PostgresLockGuard | null>;
  query(): Promise<PostgresLockManagerSnapshot>;
  /** Ends the pool the manager made from a config; a pool it was given is left to its owner. */
  end(): Promise<void>;
}
