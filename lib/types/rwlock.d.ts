// RWLock, a fair readers-writer lock with an upgradable read lock.
import { CrossProcessPrimitive } from './primitive.js';
import type { AsyncWaitOptions, Guard, LockState } from './shared.js';

/**
 * A readers-writer lock usable from any thread, blocking or with Promises: many readers at once,
 * or one writer. Fair: once anybody waits, newcomers queue behind it, and each release grants the
 * lock in FIFO order (the oldest writer alone, or the run of readers at the head of the queue), so
 * readers cannot starve a writer. Read holds are counted, not recorded per thread: a thread that
 * holds a read lock and calls lock() waits forever (upgrading is not detected). Zeroed memory is an
 * unlocked RWLock. In sharedMemory() the waiters of every process compete on each release instead
 * of being granted the lock in order; newcomers still queue while anybody waits.
 */
export class RWLock extends CrossProcessPrimitive<[]> {
  /**
   * Blocks until this thread holds the write lock. Throws ERR_PARKLOCK_DEADLOCK if it already does
   * (also when its own pending lockAsync() is granted the lock while it blocks), and
   * OwnerDiedError (holding the write lock) if the previous writer ended while holding it.
   * Returns the previous write acquisition's guard again if nothing has released through it, as
   * Mutex does (lockAsync() too).
   */
  lock(): Guard;
  /** Takes the write lock if granted within timeoutMs (default 0: only if free now). Throws as lock(). */
  tryLock(timeoutMs?: number): boolean;
  /**
   * Never blocks; rejects with TimeoutError or `signal.reason`, having taken nothing, or with
   * OwnerDiedError (holding the write lock).
   */
  lockAsync(options?: AsyncWaitOptions): Promise<Guard>;
  /** Releases the write lock; ERR_PARKLOCK_NOT_OWNER unless this thread holds it. */
  unlock(): void;
  /**
   * Blocks until this thread holds a read lock. ERR_PARKLOCK_DEADLOCK if it holds the write lock
   * (also when its own pending lockAsync() is granted it while it blocks); OwnerDiedError (holding
   * a read lock, which its guard releases) if the previous writer ended while holding the lock.
   */
  lockShared(): Guard;
  /**
   * Takes a read lock if granted within timeoutMs (default 0: only if no writer holds or waits).
   * Throws as lockShared().
   */
  tryLockShared(timeoutMs?: number): boolean;
  /**
   * Never blocks; rejects with TimeoutError or `signal.reason`, having taken nothing, or with
   * OwnerDiedError (holding a read lock).
   */
  lockSharedAsync(options?: AsyncWaitOptions): Promise<Guard>;
  /**
   * Releases one read hold; ERR_PARKLOCK_NOT_OWNER if no reader holds the lock, or only the
   * upgradable read lock does.
   */
  unlockShared(): void;
  /**
   * Blocks until this thread holds the upgradable read lock: a read lock that one thread at a time
   * holds beside plain readers (newcomers queue behind waiters as for lockShared()), and that
   * upgrade() turns into the write lock. The guard releases whatever the hold has become: the
   * upgradable read lock, the write lock after upgrade(), or a read lock after a later
   * downgrade(). ERR_PARKLOCK_DEADLOCK if this thread holds the write lock or the upgradable read
   * lock; OwnerDiedError (holding the upgradable read lock) if the previous writer ended holding
   * the lock.
   */
  lockUpgradable(): Guard;
  /** Takes the upgradable read lock if granted within timeoutMs (default 0: only if available now). */
  tryLockUpgradable(timeoutMs?: number): boolean;
  /**
   * Never blocks; rejects with TimeoutError or `signal.reason`, having taken nothing, or with
   * OwnerDiedError (holding the upgradable read lock).
   */
  lockUpgradableAsync(options?: AsyncWaitOptions): Promise<Guard>;
  /**
   * Releases the upgradable read lock; ERR_PARKLOCK_NOT_OWNER unless this thread holds it,
   * ERR_PARKLOCK_UPGRADE_PENDING while its upgradeAsync() is pending.
   */
  unlockUpgradable(): void;
  /**
   * Turns this thread's upgradable read lock into the write lock (release it with unlock()),
   * blocking until the other readers have left; no reader joins meanwhile, and no writer can come
   * first. ERR_PARKLOCK_NOT_OWNER unless this thread holds the upgradable read lock,
   * ERR_PARKLOCK_UPGRADE_PENDING while its upgradeAsync() is pending.
   */
  upgrade(): void;
  /**
   * Upgrades if the other readers leave within timeoutMs (default 0: only if this thread is the
   * only reader now); false keeps the upgradable read lock. Throws as upgrade().
   */
  tryUpgrade(timeoutMs?: number): boolean;
  /**
   * Never blocks; resolves once upgraded. Rejects with TimeoutError or `signal.reason` keeping the
   * upgradable read lock, or as upgrade() throws.
   */
  upgradeAsync(options?: AsyncWaitOptions): Promise<void>;
  /** The Node threadId of the thread holding the upgradable read lock now (a snapshot), or null. */
  readonly upgrader: number | null;
  /** The pid of the process whose thread holds the upgradable read lock now, or null. */
  readonly upgraderProcess: number | null;
  readonly isUpgradableLockedByCurrentThread: boolean;
  /**
   * Takes the write lock asynchronously, runs fn, always unlocks; returns fn's result or rethrows
   * its error. If the previous writer ended holding the lock, fn still runs holding it, with
   * `{ ownerDied: true, threadId, pid }`, and a process warning is emitted; it does not reject.
   */
  executeLocked<T>(fn: (state: LockState) => T | PromiseLike<T>, options?: AsyncWaitOptions): Promise<Awaited<T>>;
  /** The same with a read lock. */
  executeShared<T>(fn: (state: LockState) => T | PromiseLike<T>, options?: AsyncWaitOptions): Promise<Awaited<T>>;
  /**
   * Resolves once neither a writer nor any reader holds the lock (at once if none does now),
   * without keeping it: as Mutex#waitForUnlock, it takes its turn in the FIFO queue as a writer
   * (readers that come later wait behind it) and unlocks as soon as it is handed the write lock.
   * Rejects as lockAsync() does: TimeoutError, `signal.reason`, or OwnerDiedError (holding the
   * write lock, for the caller to repair and unlock).
   */
  waitForUnlock(options?: AsyncWaitOptions): Promise<void>;
  /** Held by a writer or by at least one reader. */
  readonly isLocked: boolean;
  readonly isWriteLocked: boolean;
  /** How many read holds are outstanding, the upgradable read lock included. */
  readonly readers: number;
  readonly isWriteLockedByCurrentThread: boolean;
  /**
   * The Node threadId of the thread holding the write lock now (a snapshot), or null (also for
   * another process's thread, in sharedMemory()).
   */
  readonly writer: number | null;
  /**
   * The pid of the process whose thread holds the write lock now (in a SharedArrayBuffer, this
   * process's), or null if none does or, in sharedMemory(), its identity has been reused.
   */
  readonly writerProcess: number | null;
  /**
   * Turns this thread's write lock into a read lock, atomically: no writer can come between, and
   * readers queued at the head are let in at once. Release it with unlockShared(). Throws
   * ERR_PARKLOCK_NOT_OWNER if this thread does not hold the write lock.
   */
  downgrade(): void;
}
