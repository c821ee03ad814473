// Mutex and its alias AsyncLock.
import { CrossProcessPrimitive } from './primitive.js';
import type { AsyncWaitOptions, Guard, LockState } from './shared.js';

/**
 * A fair, owner-checked three-state mutex usable from any thread, blocking or with Promises.
 * Zeroed memory is an unlocked mutex.
 */
export class Mutex extends CrossProcessPrimitive<[]> {
  /**
   * Blocks this thread until it holds the mutex. Throws ERR_PARKLOCK_DEADLOCK if it already does,
   * and OwnerDiedError (holding the mutex) if its previous owner ended while holding it. Returns
   * the previous acquisition's guard again if nothing has released through it (unlock() did),
   * else a new one; lockAsync() resolves to a guard by the same rule.
   */
  lock(): Guard;
  /** Takes the mutex if free within timeoutMs (default 0: only if free now). Throws OwnerDiedError as lock(). */
  tryLock(timeoutMs?: number): boolean;
  /** Throws ERR_PARKLOCK_NOT_OWNER unless this thread holds the mutex. */
  unlock(): void;
  /** Never blocks; rejects with TimeoutError, `signal.reason` or OwnerDiedError (holding the mutex). */
  lockAsync(options?: AsyncWaitOptions): Promise<Guard>;
  /**
   * Locks asynchronously, runs fn, always unlocks; returns fn's result or rethrows its error.
   * If the previous owner ended holding the mutex, fn still runs holding it, with
   * `{ ownerDied: true, threadId, pid }`, and a process warning is emitted; it does not reject.
   */
  executeLocked<T>(fn: (state: LockState) => T | PromiseLike<T>, options?: AsyncWaitOptions): Promise<Awaited<T>>;
  /**
   * Resolves once the mutex is unlocked (at once if it is now), without keeping it: it takes its
   * turn in the FIFO queue like lockAsync() and unlocks as soon as it is handed the mutex.
   * Rejects as lockAsync() does: TimeoutError, `signal.reason`, or OwnerDiedError (holding the
   * mutex, for the caller to repair and unlock).
   */
  waitForUnlock(options?: AsyncWaitOptions): Promise<void>;
  readonly isLocked: boolean;
  readonly isHeldByCurrentThread: boolean;
  /**
   * The Node threadId of the thread holding it now (a snapshot), or null if it is unlocked (or,
   * in sharedMemory(), held by another process).
   */
  readonly holder: number | null;
  /** The pid of the process holding it now (a snapshot), or null if it is unlocked. */
  readonly holderProcess: number | null;
}
/** The same class as Mutex, under the name the Atomics.waitAsync articles use. */
export const AsyncLock: typeof Mutex;
export type AsyncLock = Mutex;
