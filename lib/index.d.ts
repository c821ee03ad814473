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

/** A single-use countdown latch: waiters are released once the count reaches 0. */
export class Latch implements SharedLocation {
  /** Allocates its own shared memory holding `count` (an integer from 0 to 2^31-1). */
  constructor(count: number);
  /** A latch already in caller memory (Latch.BYTES bytes, aligned to Latch.ALIGN; zeroed = open). */
  constructor(buffer: SharedArrayBuffer, byteOffset?: number);
  /** What a Latch becomes after postMessage / workerData. */
  constructor(location: SharedLocation);
  /** Writes `count` at that location (not for a latch in use) and returns the latch there. */
  static init(buffer: SharedArrayBuffer, byteOffset: number, count: number): Latch;
  static readonly BYTES: number;
  static readonly ALIGN: number;
  readonly buffer: SharedArrayBuffer;
  readonly byteOffset: number;
  /** The count-downs still missing (0: open). */
  readonly count: number;
  /** Takes n (default 1) off the count; RangeError unless 1 <= n <= count. */
  countDown(n?: number): void;
  /** Blocks until the count is 0 (true) or timeoutMs passes (false). */
  wait(timeoutMs?: number): boolean;
  /** Resolves true when the count is 0, false on timeout; rejects with `signal.reason` on abort. */
  waitAsync(options?: AsyncWaitOptions): Promise<boolean>;
  /** Whether the count is 0 now; never waits. */
  tryWait(): boolean;
}

/** A reusable barrier for a fixed number of parties (1 to 65535). */
export class Barrier implements SharedLocation {
  /** Allocates its own shared memory for `parties` parties. */
  constructor(parties: number);
  /** A barrier already initialized in caller memory (Barrier.BYTES bytes, aligned to Barrier.ALIGN). */
  constructor(buffer: SharedArrayBuffer, byteOffset?: number);
  /** What a Barrier becomes after postMessage / workerData. */
  constructor(location: SharedLocation);
  /** Writes a fresh barrier at that location (not for a barrier in use) and returns it. */
  static init(buffer: SharedArrayBuffer, byteOffset: number, parties: number): Barrier;
  static readonly BYTES: number;
  static readonly ALIGN: number;
  readonly buffer: SharedArrayBuffer;
  readonly byteOffset: number;
  readonly parties: number;
  /**
   * Arrives and blocks until all parties have arrived: true in exactly one party per generation
   * (the last to arrive), false in the others. Throws TimeoutError after timeoutMs, having
   * withdrawn the arrival (unless the generation completed meanwhile: then it returns false).
   */
  wait(timeoutMs?: number): boolean;
  /** As wait(), never blocking; rejects with TimeoutError or `signal.reason` (withdrawing the arrival). */
  waitAsync(options?: AsyncWaitOptions): Promise<boolean>;
}

/** The shared-memory layouts, as the addon defines them (see addon/*.h). */
export const layouts: {
  readonly mutex: Readonly<Record<string, number>>;
  readonly latch: Readonly<Record<string, number>>;
  readonly barrier: Readonly<Record<string, number>>;
};
