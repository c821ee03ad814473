// Barrier, a reusable barrier.
import { CrossProcessPrimitive } from './primitive.js';
import type { SharedMemory } from './shared_region.js';
import type { AsyncWaitOptions } from './shared.js';

/**
 * A reusable barrier for a fixed number of parties (1 to 65535). Caller memory must hold a barrier
 * already (Barrier.init()).
 */
export class Barrier extends CrossProcessPrimitive<[parties: number]> {
  /**
   * Writes a fresh barrier at that location (not for a barrier in use) and returns it; in
   * sharedMemory(), memory.place(byteOffset, Barrier, parties).
   */
  static init(buffer: SharedArrayBuffer | SharedMemory, byteOffset: number, parties: number): Barrier;
  readonly parties: number;
  /**
   * Arrives and blocks until all parties have arrived: true in exactly one party per generation
   * (the last to arrive), false in the others. Throws TimeoutError after timeoutMs, having
   * withdrawn the arrival (unless the generation completed meanwhile: then it returns false).
   */
  wait(timeoutMs?: number): boolean;
  /** As wait(), never blocking; rejects with TimeoutError or `signal.reason` (withdrawing the arrival). */
  waitAsync(options?: AsyncWaitOptions): Promise<boolean>;
  /** As every primitive's; a cancelled wait withdraws its arrival (as an abort does). */
  cancelPendingWaits(reason?: unknown): number;
}
