// Type declarations for parklock. Each primitive lives in shared memory: construct it in one
// thread, pass it to others with postMessage / workerData (it arrives as { buffer, byteOffset }),
// and rebuild it there with `new X(received)`.

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

/** Rejection reason of a wait that timed out; `code` is 'ERR_PARKLOCK_TIMEOUT'. */
export class TimeoutError extends Error {
  readonly name: 'TimeoutError';
  readonly code: 'ERR_PARKLOCK_TIMEOUT';
}

/** A fair, owner-checked three-state mutex usable from any thread, blocking or with Promises. */
export class Mutex implements SharedLocation {
  /** Allocates its own zeroed shared memory. */
  constructor();
  /** Lives in caller memory (Mutex.BYTES bytes, aligned to Mutex.ALIGN; zeroed = unlocked). */
  constructor(buffer: SharedArrayBuffer, byteOffset?: number);
  /** What a Mutex becomes after postMessage / workerData. */
  constructor(location: SharedLocation);
  static readonly BYTES: number;
  static readonly ALIGN: number;
  readonly buffer: SharedArrayBuffer;
  readonly byteOffset: number;
  /** Blocks this thread until it holds the mutex. Throws ERR_PARKLOCK_DEADLOCK if it already does. */
  lock(): Guard;
  /** Takes the mutex if free within timeoutMs (default 0: only if free now). */
  tryLock(timeoutMs?: number): boolean;
  /** Throws ERR_PARKLOCK_NOT_OWNER unless this thread holds the mutex. */
  unlock(): void;
  /** Never blocks; rejects with TimeoutError or `signal.reason`. */
  lockAsync(options?: AsyncWaitOptions): Promise<Guard>;
  /** Locks asynchronously, runs fn, always unlocks; returns fn's result or rethrows its error. */
  executeLocked<T>(fn: () => T | PromiseLike<T>, options?: AsyncWaitOptions): Promise<Awaited<T>>;
  readonly isLocked: boolean;
  readonly isHeldByCurrentThread: boolean;
}
/** The same class as Mutex, under the name the Atomics.waitAsync articles use. */
export const AsyncLock: typeof Mutex;
export type AsyncLock = Mutex;

export type FutexWaitResult = 'ok' | 'not-equal' | 'timed-out';

/** Futex-style wait/notify with parklock's own waiter lists (Atomics.notify does not wake them). */
export const futex: {
  wait(int32Array: Int32Array, index: number, expected: number, timeoutMs?: number): FutexWaitResult;
  waitAsync(
    int32Array: Int32Array,
    index: number,
    expected: number,
    options?: AsyncWaitOptions,
  ): Promise<FutexWaitResult>;
  notify(int32Array: Int32Array, index: number, count?: number): number;
};

/** The shared-memory layouts, as the addon defines them (see addon/*.h). */
export const layouts: {
  readonly mutex: Readonly<Record<string, number>>;
};
