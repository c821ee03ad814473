// Latch, a single-use countdown latch.
import { CrossProcessPrimitive } from './primitive.js';
import type { SharedMemory } from './shared_region.js';
import type { AsyncWaitOptions } from './shared.js';

/**
 * A single-use countdown latch: waiters are released once the count reaches 0. `count` is an
 * integer from 0 to 2^31-1; zeroed memory is an open latch.
 */
export class Latch extends CrossProcessPrimitive<[count: number]> {
  /**
   * Writes `count` at that location (not for a latch in use) and returns the latch there; in
   * sharedMemory(), memory.place(byteOffset, Latch, count).
   */
  static init(buffer: SharedArrayBuffer | SharedMemory, byteOffset: number, count: number): Latch;
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
