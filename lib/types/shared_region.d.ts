// sharedMemory(): memory several processes share through a file, for a Mutex, Condition,
// Semaphore, RWLock, Latch, Barrier or Once that waits across processes (Linux, macOS and Windows;
// elsewhere it throws ERR_PARKLOCK_UNSUPPORTED).
import type { Mutex } from './mutex.js';
import type { Condition } from './condition.js';
import type { Semaphore } from './semaphore.js';
import type { RWLock } from './rwlock.js';
import type { Latch } from './latch.js';
import type { Barrier } from './barrier.js';
import type { Once } from './once.js';

/**
 * A region from sharedMemory(): mapped while this buffer, a primitive placed in it, or a wait on
 * one is alive; unmapped once the garbage collector has freed them all.
 */
export interface SharedMemory {
  /**
   * The region's bytes: a SharedArrayBuffer from Node 26 on (primitives in it can be posted to
   * workers); before, an ArrayBuffer, which posting would copy: each thread calls sharedMemory()
   * with the path.
   */
  readonly buffer: SharedArrayBuffer | ArrayBuffer;
  /**
   * The bytes to lay out: the size asked for (or the file's). Past them, the buffer holds the
   * region's placement table.
   */
  readonly byteLength: number;
  /**
   * The primitive at `byteOffset`, the same call in every process: the first to place it writes
   * its initial value, the others find it, never before it is written (the first placer's value
   * stands). Throws ERR_PARKLOCK_OVERLAP where it overlaps another placement, or another kind is
   * at the same bytes.
   */
  place(byteOffset: number, Class: typeof Latch, count: number): Latch;
  place(byteOffset: number, Class: typeof Barrier, parties: number): Barrier;
  place(byteOffset: number, Class: typeof Semaphore, permits?: number): Semaphore;
  place(byteOffset: number, Class: typeof Mutex): Mutex;
  place(byteOffset: number, Class: typeof Condition): Condition;
  place(byteOffset: number, Class: typeof RWLock): RWLock;
  place(byteOffset: number, Class: typeof Once): Once;
  readonly path: string;
  /**
   * Whether this call made the file a region: it created it, or repaired a file that a creator
   * killed before finishing had left.
   */
  readonly created: boolean;
}

export interface SharedMemoryOptions {
  /**
   * Bytes for primitives, a multiple of 8 up to 858,993,440 (default 4096 when creating; an
   * existing file's own).
   */
  size?: number;
  /** The new file's mode (default 0o600). */
  mode?: number;
  /**
   * Create the file if it does not exist, or repair one that a killed creator left unfinished
   * (default true). A region appears at its path only once finished; never through a symlink.
   */
  create?: boolean;
}

/**
 * Opens or creates the region at `path`. Throws Node's fs errors (ENOENT, ELOOP, ...) and
 * ERR_PARKLOCK_REGION_INVALID / _VERSION / _MECHANISM / _SIZE / _OWNER / _BUSY / _LIMIT for files
 * it refuses.
 */
export function sharedMemory(path: string | URL, options?: SharedMemoryOptions): SharedMemory;
