// Guard implements Symbol.dispose / Symbol.asyncDispose (Node >= 18.18 has both). This names the
// library that declares them, so the declarations compile whatever `lib` and `types` the consumer
// sets (TypeScript >= 5.2).
/// <reference lib="esnext.disposable" />

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
   * If the previous owner ended holding the mutex, fn is not run: rejects with OwnerDiedError.
   */
  executeLocked<T>(fn: () => T | PromiseLike<T>, options?: AsyncWaitOptions): Promise<Awaited<T>>;
  /**
   * Resolves once the mutex is unlocked (at once if it is now), without keeping it: it takes its
   * turn in the FIFO queue like lockAsync() and unlocks as soon as it is handed the mutex.
   * Rejects as lockAsync() does: TimeoutError, `signal.reason`, or OwnerDiedError (holding the
   * mutex, for the caller to repair and unlock).
   */
  waitForUnlock(options?: AsyncWaitOptions): Promise<void>;
  /**
   * Rejects every Promise wait that this thread started through this object and that is still
   * pending, with `reason` (default: an Error with code 'ERR_PARKLOCK_CANCELLED'); nothing stays
   * queued. Returns how many waits it cancelled.
   */
  cancelPendingWaits(reason?: unknown): number;
  /** How many waits (blocking and Promise, in every thread) are queued on it now: a snapshot. */
  readonly waiting: number;
  readonly hasWaiters: boolean;
  readonly isLocked: boolean;
  readonly isHeldByCurrentThread: boolean;
  /** The Node threadId of the thread holding it now (a snapshot), or null if it is unlocked. */
  readonly holder: number | null;
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

/**
 * A condition variable used with a Mutex. wait() releases the mutex, sleeps until notified, and
 * returns holding it again; notifyAll() moves waiters onto a held mutex's queue.
 */
export class Condition implements SharedLocation {
  constructor();
  constructor(buffer: SharedArrayBuffer, byteOffset?: number);
  constructor(location: SharedLocation);
  static readonly BYTES: number;
  static readonly ALIGN: number;
  readonly buffer: SharedArrayBuffer;
  readonly byteOffset: number;
  /** The caller must hold `mutex`. false on timeout; the mutex is held again either way. */
  wait(mutex: Mutex, timeoutMs?: number): boolean;
  /** Resolves true if notified, false on timeout; rejects with signal.reason on abort. */
  waitAsync(mutex: Mutex, options?: AsyncWaitOptions): Promise<boolean>;
  /** As Mutex#cancelPendingWaits; a cancelled wait rejects once it holds the mutex again. */
  cancelPendingWaits(reason?: unknown): number;
  /** How many waits (blocking and Promise, in every thread) are queued on it now: a snapshot. */
  readonly waiting: number;
  readonly hasWaiters: boolean;
  /** -> number of waiters woken (0 or 1). */
  notifyOne(): number;
  /** -> number of waiters woken or moved onto the mutex. */
  notifyAll(): number;
}

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
  /** As Mutex#cancelPendingWaits. */
  cancelPendingWaits(reason?: unknown): number;
  /** How many waits (blocking and Promise, in every thread) are queued on it now: a snapshot. */
  readonly waiting: number;
  readonly hasWaiters: boolean;
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
  /** As Mutex#cancelPendingWaits; a cancelled wait withdraws its arrival (as an abort does). */
  cancelPendingWaits(reason?: unknown): number;
  /** How many waits (blocking and Promise, in every thread) are queued on it now: a snapshot. */
  readonly waiting: number;
  readonly hasWaiters: boolean;
}

/**
 * An eventually fair counting semaphore usable from any thread, blocking or with Promises: a
 * running thread may take released permits before a queued request (barging), bounded by the
 * fairness interval (about 1 ms), after which permits are handed to the oldest waiters directly,
 * so a large request is not starved by small ones.
 */
export class Semaphore implements SharedLocation {
  /** Allocates its own shared memory holding `initialPermits` (default 0) permits. */
  constructor(initialPermits?: number);
  /** A semaphore already in caller memory (Semaphore.BYTES bytes, aligned to Semaphore.ALIGN; zeroed = 0 permits). */
  constructor(buffer: SharedArrayBuffer, byteOffset?: number);
  /** What a Semaphore becomes after postMessage / workerData. */
  constructor(location: SharedLocation);
  /** Writes a semaphore with `permits` permits at that location (not for one in use) and returns it. */
  static init(buffer: SharedArrayBuffer, byteOffset: number, permits: number): Semaphore;
  static readonly BYTES: number;
  static readonly ALIGN: number;
  /** The most permits a semaphore holds, and the largest single request or release (2^30 - 1). */
  static readonly MAX_PERMITS: number;
  readonly buffer: SharedArrayBuffer;
  readonly byteOffset: number;
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
  /**
   * Rejects every Promise wait that this thread started through this object and that is still
   * pending, with `reason` (default: an Error with code 'ERR_PARKLOCK_CANCELLED'); nothing stays
   * queued. Returns how many waits it cancelled.
   */
  cancelPendingWaits(reason?: unknown): number;
  /** How many waits (blocking and Promise, in every thread) are queued on it now: a snapshot. */
  readonly waiting: number;
  readonly hasWaiters: boolean;
  /** Permits available now (not counting those already granted to waiters). */
  readonly available: number;
}

/**
 * A readers-writer lock usable from any thread, blocking or with Promises: many readers at once,
 * or one writer. Fair: once anybody waits, newcomers queue behind it, and each release grants the
 * lock in FIFO order (the oldest writer alone, or the run of readers at the head of the queue), so
 * readers cannot starve a writer. Read holds are counted, not recorded per thread: a thread that
 * holds a read lock and calls lock() waits forever (upgrading is not detected).
 */
export class RWLock implements SharedLocation {
  /** Allocates its own zeroed shared memory. */
  constructor();
  /** Lives in caller memory (RWLock.BYTES bytes, aligned to RWLock.ALIGN; zeroed = unlocked). */
  constructor(buffer: SharedArrayBuffer, byteOffset?: number);
  /** What an RWLock becomes after postMessage / workerData. */
  constructor(location: SharedLocation);
  static readonly BYTES: number;
  static readonly ALIGN: number;
  readonly buffer: SharedArrayBuffer;
  readonly byteOffset: number;
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
  readonly isUpgradableLockedByCurrentThread: boolean;
  /**
   * Takes the write lock asynchronously, runs fn, always unlocks; returns fn's result or rethrows
   * its error. If the previous writer ended holding the lock, fn is not run: rejects with
   * OwnerDiedError (holding the write lock).
   */
  executeLocked<T>(fn: () => T | PromiseLike<T>, options?: AsyncWaitOptions): Promise<Awaited<T>>;
  /** The same with a read lock (an OwnerDiedError's guard then holds a read lock). */
  executeShared<T>(fn: () => T | PromiseLike<T>, options?: AsyncWaitOptions): Promise<Awaited<T>>;
  /**
   * Rejects every Promise wait that this thread started through this object and that is still
   * pending, with `reason` (default: an Error with code 'ERR_PARKLOCK_CANCELLED'); nothing stays
   * queued. Returns how many waits it cancelled.
   */
  cancelPendingWaits(reason?: unknown): number;
  /** How many waits (blocking and Promise, in every thread) are queued on it now: a snapshot. */
  readonly waiting: number;
  readonly hasWaiters: boolean;
  /** Held by a writer or by at least one reader. */
  readonly isLocked: boolean;
  readonly isWriteLocked: boolean;
  /** How many read holds are outstanding, the upgradable read lock included. */
  readonly readers: number;
  readonly isWriteLockedByCurrentThread: boolean;
  /** The Node threadId of the thread holding the write lock now (a snapshot), or null. */
  readonly writer: number | null;
  /**
   * Turns this thread's write lock into a read lock, atomically: no writer can come between, and
   * readers queued at the head are let in at once. Release it with unlockShared(). Throws
   * ERR_PARKLOCK_NOT_OWNER if this thread does not hold the write lock.
   */
  downgrade(): void;
}

/** A step of a deadlock cycle: `threadId` waits for the lock `waitsFor`, held by the next step's thread. */
export interface DeadlockStep {
  /** Node threadId, or null for a thread that is not a Node thread. */
  readonly threadId: number | null;
  readonly waitsFor: { readonly kind: 'mutex' | 'rwlock'; readonly address: string };
}

/**
 * What a blocking lock call throws (code ERR_PARKLOCK_DEADLOCK) when it would close a cycle of
 * threads each blocked waiting for a lock the next one holds: exactly one of them gets it, and
 * must release what it holds so that the others proceed.
 */
export interface DeadlockError extends Error {
  readonly code: 'ERR_PARKLOCK_DEADLOCK';
  /** Starts with the calling thread; absent when the deadlock is with the thread itself. */
  readonly cycle?: readonly DeadlockStep[];
}

export interface InspectedWaiter {
  /** Node threadId of the waiting thread (null: not a Node thread). */
  readonly threadId: number | null;
  /** A thread blocked in the call (true), or a pending Promise (false). */
  readonly blocking: boolean;
  readonly waitedMs: number;
  /** RWLock: 'read' or 'write'; Semaphore: the permits asked for. */
  readonly request?: 'read' | 'write' | 'upgradable' | 'upgrade' | number;
}

export interface InspectedPrimitive {
  readonly kind: 'mutex' | 'rwlock' | 'semaphore' | 'condition' | 'latch' | 'barrier' | 'futex' | string;
  /** Where its word lives: the same string in every thread. */
  readonly address: string;
  /** This thread's object for that memory, if it has used one on contention; else null. */
  readonly primitive: object | null;
  /**
   * Node threadId of the thread holding a Mutex, or an RWLock's write lock or upgradable read
   * lock, else null.
   */
  readonly holder: number | null;
  /** Oldest first. */
  readonly waiters: readonly InspectedWaiter[];
}

/** Every primitive of the process that has waiters now, with its holder and waiters: a snapshot. */
export function inspect(): InspectedPrimitive[];

export interface WatchdogOptions {
  /** Report waits at least this long (default 1000). */
  thresholdMs?: number;
  /** How often to look (default thresholdMs / 2, at least 10). */
  intervalMs?: number;
  /** Called with the long waits; default: process.emitWarning with code PARKLOCK_STALLED_WAIT. */
  onStall?: (entries: InspectedPrimitive[], thresholdMs: number) => void;
}

/** Checks for long waits every intervalMs, without keeping the event loop alive. */
export function watchdog(options?: WatchdogOptions): { stop(): void };

/** The message of the `parklock:wait:start` and `parklock:wait:end` diagnostics channels. */
export interface WaitEvent {
  primitive: string;
  blocking: boolean;
  threadId: number;
  startTime: number;
  /** End events only. */
  duration?: number;
  outcome?:
    | 'acquired'
    | 'timed-out'
    | 'cancelled'
    | 'owner-died'
    | 'deadlock'
    | 'not-equal'
    | 'interrupted'
    | 'error';
}

/** The shared-memory layouts, as the addon defines them (see addon/*.h). */
export const layouts: {
  readonly mutex: Readonly<Record<string, number>>;
  readonly condition: Readonly<Record<string, number>>;
  readonly latch: Readonly<Record<string, number>>;
  readonly barrier: Readonly<Record<string, number>>;
  readonly semaphore: Readonly<Record<string, number>>;
  readonly rwlock: Readonly<Record<string, number>>;
};
