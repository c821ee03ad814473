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
 * Thrown (or the rejection reason) when a lock is acquired whose previous owner ended while
 * holding it: terminated, exited, crashed, or its code returned. The lock IS held, through
 * `guard`: repair the data it protects, then `error.guard.unlock()`.
 */
export class OwnerDiedError extends Error {
  readonly name: 'OwnerDiedError';
  readonly code: 'ERR_PARKLOCK_OWNER_DIED';
  /** Holds the lock for the catcher. */
  readonly guard: Guard;
  /** The Node threadId of the owner that ended (null if it was not a Node thread). */
  readonly threadId: number | null;
}
