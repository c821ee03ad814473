// Once, a once-only initialization.
import { CrossProcessPrimitive } from './primitive.js';
import type { AsyncWaitOptions } from './shared.js';

/**
 * What a Once's initializer receives when the previous run's thread ended before completing it
 * (terminated, exited, crashed): an OwnerDiedError without a guard. Repair what that run left
 * half-done, then initialize.
 */
export interface PreviousRunDiedError extends Error {
  readonly name: 'OwnerDiedError';
  readonly code: 'ERR_PARKLOCK_OWNER_DIED';
  readonly guard: null;
  /** The Node threadId of the thread that ended running it (null if it was not a Node thread). */
  readonly threadId: number | null;
  /** Its process's pid: this process's, or null for a Once in sharedMemory(). */
  readonly pid: number | null;
}

/**
 * A once-only initialization usable from any thread (like Go's sync.Once): the first caller runs
 * its initializer, the others wait for it and return without running theirs; if it throws (or
 * rejects), the once stays not done and the next caller runs its own. Zeroed memory is a once not
 * done.
 */
export class Once extends CrossProcessPrimitive<[]> {
  /** Whether an initializer has completed (for good once true). */
  readonly done: boolean;
  /**
   * Runs fn unless an initializer has completed, blocking while another call runs one. Returns
   * true if this call ran fn to completion, false if it was done already; rethrows what fn throws
   * (the once stays not done). Throws ERR_PARKLOCK_DEADLOCK if called from inside the initializer
   * this thread runs.
   */
  run(fn: (previousRunDied: PreviousRunDiedError | undefined) => unknown): boolean;
  /**
   * As run(), without blocking: fn may be async (the run completes when its Promise fulfils).
   * Resolves true if this call ran it, false if done already; rejects with fn's error. The options
   * bound the wait for another call's run (TimeoutError, `signal.reason`), never fn's own.
   */
  runAsync(
    fn: (previousRunDied: PreviousRunDiedError | undefined) => unknown,
    options?: AsyncWaitOptions,
  ): Promise<boolean>;
}
