// sharedMemory(): memory several processes share through a file, for a Mutex, Condition,
// Semaphore, RWLock, Latch, Barrier or Once that waits across processes (Linux; elsewhere it throws
// ERR_PARKLOCK_UNSUPPORTED).

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
  readonly byteLength: number;
  readonly path: string;
  /**
   * Whether this call made the file a region: it created it, or repaired a file that a creator
   * killed before finishing had left.
   */
  readonly created: boolean;
}

export interface SharedMemoryOptions {
  /** Bytes for primitives, a multiple of 8 (default 4096 when creating; an existing file's own). */
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
 * ERR_PARKLOCK_REGION_INVALID / _VERSION / _SIZE / _OWNER / _BUSY / _LIMIT for files it refuses.
 */
export function sharedMemory(path: string | URL, options?: SharedMemoryOptions): SharedMemory;
