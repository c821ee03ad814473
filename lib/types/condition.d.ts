// Condition, a condition variable used with a Mutex.
import { CrossProcessPrimitive } from './primitive.js';
import type { AsyncWaitOptions } from './shared.js';
import type { Mutex } from './mutex.js';

/**
 * A condition variable used with a Mutex. wait() releases the mutex, sleeps until notified, and
 * returns holding it again; notifyAll() moves waiters onto a held mutex's queue. In
 * sharedMemory() it waits across processes, with a Mutex there too.
 */
export class Condition extends CrossProcessPrimitive<[]> {
  /** The caller must hold `mutex`. false on timeout; the mutex is held again either way. */
  wait(mutex: Mutex, timeoutMs?: number): boolean;
  /** Resolves true if notified, false on timeout; rejects with signal.reason on abort. */
  waitAsync(mutex: Mutex, options?: AsyncWaitOptions): Promise<boolean>;
  /** As every primitive's; a cancelled wait rejects once it holds the mutex again. */
  cancelPendingWaits(reason?: unknown): number;
  /**
   * -> number of waiters woken (0 or 1). In sharedMemory(): 1 if it posted a notification for a
   * waiter in any process, 0 if each already has one.
   */
  notifyOne(): number;
  /**
   * -> number of waiters woken or moved onto the mutex. In sharedMemory(): how many
   * notifications it posted.
   */
  notifyAll(): number;
}
