// The members and constructors every primitive class has (lib/primitive.js). Not exported by the
// package: only the classes that extend it are.
import type { SharedLocation } from './shared.js';
import type { SharedMemory } from './shared_region.js';

/**
 * Every primitive is constructed the same three ways, declared here once: a class declares no
 * constructor, and inherits these for its own instances. `Args`: what allocating one takes.
 */
export abstract class Primitive<Args extends unknown[]> implements SharedLocation {
  /** Allocates its own shared memory, initialized from the arguments (see the class). */
  constructor(...args: Args);
  /**
   * Lives in caller memory that holds one already (the class says what zeroed memory holds):
   * BYTES bytes at `byteOffset` (default 0), aligned to ALIGN.
   */
  constructor(buffer: SharedArrayBuffer, byteOffset?: number);
  /** What the primitive becomes after postMessage / workerData. */
  constructor(location: SharedLocation);
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

/**
 * A primitive that also waits across processes: it takes the memory of sharedMemory() as it
 * takes a SharedArrayBuffer. Not exported either.
 */
export abstract class CrossProcessPrimitive<Args extends unknown[]> extends Primitive<Args> {
  constructor(...args: Args);
  constructor(buffer: SharedArrayBuffer, byteOffset?: number);
  constructor(location: SharedLocation);
  /** The same primitive in every process that opens the region's path (see sharedMemory()). */
  constructor(memory: SharedMemory, byteOffset?: number);
  /**
   * Before Node 26, in sharedMemory() (whose memory is then an ArrayBuffer, which posting would
   * copy): the region's path, carried in place of `buffer` so that `new X(posted)` in a worker
   * throws ERR_PARKLOCK_NOT_POSTABLE naming it; there the worker calls sharedMemory(path) itself.
   */
  readonly sharedMemoryPath?: string;
}
