// What parklock reports about waits: deadlock errors, inspect(), watchdog() and the diagnostics
// channels' messages.

/** A step of a deadlock cycle: `threadId` waits for the lock `waitsFor`, held by the next step's thread. */
export interface DeadlockStep {
  /** Node threadId, or null for a thread that is not a Node thread. */
  readonly threadId: number | null;
  readonly waitsFor: { readonly kind: 'mutex' | 'rwlock' | 'once'; readonly address: string };
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
  readonly kind: 'mutex' | 'rwlock' | 'semaphore' | 'condition' | 'latch' | 'once' | 'barrier' | 'futex' | string;
  /** Where its word lives: the same string in every thread. */
  readonly address: string;
  /** This thread's object for that memory, if it has used one on contention; else null. */
  readonly primitive: object | null;
  /**
   * Node threadId of the thread holding a Mutex, or an RWLock's write lock or upgradable read
   * lock, or running a Once's initializer, else null.
   */
  readonly holder: number | null;
  /**
   * In sharedMemory() only: the pid of the holder's process (null if none, or no longer known).
   * Its waiters are this process's.
   */
  readonly holderProcess?: number | null;
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
