// Named locks (lib/named_locks/): `locks`, the process's own lock manager, shared by every thread
// of the process, and `new LockManager(path)`, a lock file shared by every process that opens it
// (Linux). request() and query() are the Web Locks API; lock() and tryLock() block.
/// <reference lib="esnext.disposable" />

export type LockMode = 'exclusive' | 'shared';

/** What request()'s callback receives (null there with `ifAvailable` when the name is taken). */
export class Lock {
  private constructor();
  readonly name: string;
  readonly mode: LockMode;
  /** The name's previous holder (a thread or a process) ended while holding it. */
  readonly ownerDied: boolean;
  /** Whose the name was when its holder ended; null unless ownerDied. */
  readonly deadOwner: NamedLockOwner | null;
  /**
   * Aborts (with the AbortError the request rejects with) when a `{ steal: true }` request takes
   * the name from this holder: at once for a steal by this thread, within about 50 ms for one by
   * another thread or process while the callback runs.
   */
  readonly signal: AbortSignal;
}

export interface NamedLockOwner {
  readonly pid: number;
  readonly threadId: number;
}

/** Options of request(), as the Web Locks API has them, plus `timeout`. */
export interface LockRequestOptions {
  /** Default 'exclusive'. */
  mode?: LockMode;
  /** Call the callback with null instead of waiting if the name cannot be had at once. */
  ifAvailable?: boolean;
  /** Take the name from its holders (exclusive only); their request rejects with an AbortError. */
  steal?: boolean;
  /** Aborting a request that waits rejects it with `signal.reason`, having taken nothing. */
  signal?: AbortSignal;
  /** Milliseconds to wait (default Infinity); then a TimeoutError, having taken nothing. */
  timeout?: number;
}

/** Options of lock(). */
export interface NamedLockOptions {
  mode?: LockMode;
  /** Milliseconds to wait (default Infinity); then a TimeoutError, having taken nothing. */
  timeout?: number;
}

/** Options of tryLock(). */
export interface NamedTryLockOptions {
  mode?: LockMode;
}

/**
 * What lock() and tryLock() return: the Lock's fields, and unlock() (later calls do nothing).
 * unlock() throws the AbortError of a `{ steal: true }` request that took the name meanwhile.
 */
export interface NamedLockGuard {
  readonly name: string;
  readonly mode: LockMode;
  readonly ownerDied: boolean;
  readonly deadOwner: NamedLockOwner | null;
  readonly signal: AbortSignal;
  readonly released: boolean;
  unlock(): void;
  [Symbol.dispose](): void;
  [Symbol.asyncDispose](): Promise<void>;
}

/** One request, as query() reports it. */
export interface LockInfo {
  readonly name: string;
  readonly mode: LockMode;
  /** `${pid}:${threadId}` */
  readonly clientId: string;
  readonly threadId: number;
  readonly pid: number;
}

export interface LockManagerSnapshot {
  held: LockInfo[];
  pending: LockInfo[];
}

export interface LockManagerOptions {
  /** The lock file's mode when it is created (default 0o600). */
  mode?: number;
}

export class LockManager {
  /**
   * The lock file at `path`, created (never through a symbolic link) if it does not exist and
   * shared by every process that opens it. Linux, macOS and Windows: elsewhere it throws
   * ERR_PARKLOCK_UNSUPPORTED.
   */
  constructor(path: string | URL, options?: LockManagerOptions);
  /** The lock file's path; null for `locks`. */
  readonly path: string | null;
  /**
   * Waits until it holds `name`, calls `callback` and holds the name until the callback's result
   * settles; settles with that result. Names starting with "-" and bad option combinations
   * reject with a NotSupportedError (DOMException).
   */
  request<T>(name: string, callback: (lock: Lock) => T | PromiseLike<T>): Promise<Awaited<T>>;
  request<T>(
    name: string,
    options: LockRequestOptions & { ifAvailable: true },
    callback: (lock: Lock | null) => T | PromiseLike<T>,
  ): Promise<Awaited<T>>;
  request<T>(
    name: string,
    options: LockRequestOptions & { ifAvailable?: false },
    callback: (lock: Lock) => T | PromiseLike<T>,
  ): Promise<Awaited<T>>;
  request<T>(name: string, options: LockRequestOptions, callback: (lock: Lock | null) => T | PromiseLike<T>): Promise<Awaited<T>>;
  /**
   * Blocks this thread until it holds `name`. Throws a TimeoutError after `timeout` ms, and
   * ERR_PARKLOCK_DEADLOCK if this thread holds the name through a request() not yet settled.
   */
  lock(name: string, options?: NamedLockOptions): NamedLockGuard;
  /** A guard if `name` can be had now, else null; never waits. */
  tryLock(name: string, options?: NamedTryLockOptions): NamedLockGuard | null;
  /** Every request held or pending, of every thread (and for a lock file, of every process). */
  query(): Promise<LockManagerSnapshot>;
}

/** The process's own lock manager: its names are shared by every thread of the process. */
export const locks: LockManager;
