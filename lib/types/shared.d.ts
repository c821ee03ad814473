// What every primitive's declarations use: its location, the options of its Promise forms, the
// guards its lock forms return, and the errors its waits reject with.
// Guard implements Symbol.dispose / Symbol.asyncDispose (Node >= 18.18 has both): naming the
// library that declares them lets these compile whatever `lib` and `types` the consumer sets.
/// <reference lib="esnext.disposable" />

/** Where a primitive lives: what an instance becomes after structured cloning. */
export interface SharedLocation {
  readonly buffer: SharedArrayBuffer;
  readonly byteOffset: number;
}

/** Options of every Promise-returning wait. */
export interface AsyncWaitOptions {
  /** Milliseconds before giving up (default Infinity). */
  timeout?: number;
  /** Aborting rejects the wait with `signal.reason`. */
  signal?: AbortSignal;
}

/** Releases what it holds once; `using guard = mutex.lock()` works where `using` is supported. */
export interface Guard {
  unlock(): void;
  readonly released: boolean;
  [Symbol.dispose](): void;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Returned by Semaphore#acquirePermits() and friends: releases its permits (exactly `permits` of
 * them) once; `using permits = semaphore.acquirePermits(2)` works where `using` is supported.
 */
export interface Permits {
  /** Releases the permits; later calls do nothing. */
  release(): void;
  /** How many permits this guard holds (or held). */
  readonly permits: number;
  readonly released: boolean;
  [Symbol.dispose](): void;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Rejection reason of a wait that timed out; `code` is 'ERR_PARKLOCK_TIMEOUT'. */
export class TimeoutError extends Error {
  readonly name: 'TimeoutError';
  readonly code: 'ERR_PARKLOCK_TIMEOUT';
}

/**
 * Thrown by lock(), the try forms and the Promise forms (as the rejection reason) when a lock is
 * acquired whose previous owner ended while holding it: terminated, exited, crashed, its code
 * returned, or in sharedMemory() its process ended (SIGKILL included). The lock IS held, through
 * `guard`: repair the data it protects, then `error.guard.unlock()`; from then on it is an
 * ordinary lock. executeLocked() and executeShared() do not throw it: they run fn with
 * `{ ownerDied: true, ... }` (see LockState).
 */
export class OwnerDiedError extends Error {
  readonly name: 'OwnerDiedError';
  readonly code: 'ERR_PARKLOCK_OWNER_DIED';
  /** Holds the lock for the catcher. */
  readonly guard: Guard;
  /**
   * The Node threadId of the owner that ended (null if it was not a Node thread, or a thread of
   * another process).
   */
  readonly threadId: number | null;
  /**
   * The pid of the owner's process: this process's for a lock in a SharedArrayBuffer; in
   * sharedMemory(), the holder's process as this lock last saw it (null if unknown).
   */
  readonly pid: number | null;
}

/**
 * What executeLocked() and executeShared() pass fn: whether the previous owner ended holding the
 * lock (then also its threadId and pid, as OwnerDiedError has them, and a process warning with
 * code ERR_PARKLOCK_OWNER_DIED was emitted). fn runs holding the lock either way, and the lock is
 * released after fn as usual: only the first acquirer after the death is told.
 */
export type LockState =
  | { readonly ownerDied: false }
  | { readonly ownerDied: true; readonly threadId: number | null; readonly pid: number | null };
