// futex: wait/notify on any Int32Array element of shared memory.
import type { AsyncWaitOptions } from './shared.js';

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
