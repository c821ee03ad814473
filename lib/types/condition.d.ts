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
  /**
   * The caller must hold `mutex`. false on timeout; the mutex is held again either way. In
   * sharedMemory(): ERR_PARKLOCK_TOO_MANY_WAITERS beyond 1023 waits at once, of every process.
   */
  wait(mutex: Mutex, timeoutMs?: number): boolean;
  /**
   * Resolves true if notified, false on timeout; rejects with signal.reason on abort, and in
   * sharedMemory() with ERR_PARKLOCK_TOO_MANY_WAITERS beyond 1023 waits at once.
   */
  waitAsync(mutex: Mutex, options?: AsyncWaitOptions): Promise<boolean>;
  /** As every primitive's; a cancelled wait rejects once it holds the mutex again. */
  cancelPendingWaits(reason?: unknown): number;
  /**
   * -> number of waiters woken (0 or 1). In sharedMemory(): 1 if any process has a waiter (a
   * process that died waiting may still be counted), for one of which (among the waits begun
   * before the call) it posts a notification.
   */
  notifyOne(): number;
  /**
   * -> number of waiters woken or moved onto the mutex. In sharedMemory(): the waits of every
   * living process, each of which it posts a notification.
   */
  notifyAll(): number;
}
