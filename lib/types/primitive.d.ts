// The members every primitive class has (lib/primitive.js). Not exported by the package: only the
// classes that extend it are.
import type { SharedLocation } from './shared.js';

export abstract class Primitive implements SharedLocation {
  /** The bytes of shared memory it takes. */
  static readonly BYTES: number;
  /** The alignment its byteOffset needs. */
  static readonly ALIGN: number;
  readonly buffer: SharedArrayBuffer;
  readonly byteOffset: number;
  /**
   * Rejects every Promise wait that this thread started through this object and that is still
   * pending, with `reason` (default: an Error with code 'ERR_PARKLOCK_CANCELLED'); nothing stays
   * queued. Returns how many waits it cancelled.
   */
  cancelPendingWaits(reason?: unknown): number;
  /** How many waits (blocking and Promise, in every thread) are queued on it now: a snapshot. */
  readonly waiting: number;
  readonly hasWaiters: boolean;
}
