// Semaphore, an eventually fair counting semaphore.
import { CrossProcessPrimitive } from './primitive.js';
import type { SharedMemory } from './shared_region.js';
import type { AsyncWaitOptions, Permits } from './shared.js';

/**
 * An eventually fair counting semaphore usable from any thread, blocking or with Promises: a
 * running thread may take released permits before a queued request (barging), bounded by the
 * fairness interval (about 1 ms), after which permits are handed to the oldest waiters directly,
 * so a large request is not starved by small ones. `initialPermits` defaults to 0; zeroed memory
 * holds 0 permits.
 */
export class Semaphore extends CrossProcessPrimitive<[initialPermits?: number]> {
  /**
   * Writes a semaphore with `permits` permits at that location (not for one in use) and returns
   * it; in sharedMemory(), memory.place(byteOffset, Semaphore, permits).
   */
  static init(buffer: SharedArrayBuffer | SharedMemory, byteOffset: number, permits: number): Semaphore;
  /** The most permits a semaphore holds, and the largest single request or release (2^30 - 1). */
  static readonly MAX_PERMITS: number;
  /** Blocks this thread until `n` (default 1) permits are granted to it. */
  acquire(n?: number): void;
  /** Takes `n` permits if granted within timeoutMs (default 0: only if available now and not set aside for queued waiters). */
  tryAcquire(n?: number, timeoutMs?: number): boolean;
  /** Never blocks; rejects with TimeoutError or `signal.reason`, having taken nothing. */
  acquireAsync(n?: number, options?: AsyncWaitOptions): Promise<void>;
  /** Returns `n` permits. RangeError if the available permits would exceed MAX_PERMITS. */
  release(n?: number): void;
  /** acquire(n), returning a guard that releases the `n` permits once. */
  acquirePermits(n?: number): Permits;
  /** tryAcquire(n, timeoutMs), returning a guard if the permits were taken, null otherwise. */
  tryAcquirePermits(n?: number, timeoutMs?: number): Permits | null;
  /** acquireAsync(n, options), resolving to a guard that releases the `n` permits once. */
  acquirePermitsAsync(n?: number, options?: AsyncWaitOptions): Promise<Permits>;
  /**
   * Acquires `n` (default 1) permits asynchronously, runs fn, always releases them; returns fn's
   * result or rethrows its error. fn does not run if the permits are not acquired.
   */
  executeLocked<T>(fn: () => T | PromiseLike<T>, n?: number, options?: AsyncWaitOptions): Promise<Awaited<T>>;
  /** Permits available now (not counting those already granted to waiters). */
  readonly available: number;
}
