// sharedMemory(): memory several processes share through a file, for a Mutex, Condition,
// Semaphore, RWLock, Latch, Barrier or Once that waits across processes (Linux; elsewhere it throws
// ERR_PARKLOCK_UNSUPPORTED).

/** A region from sharedMemory(): mapped until the process exits. */
export interface SharedMemory {
  /**
   * The region's bytes: a SharedArrayBuffer from Node 26 on (primitives in it can be posted to
   * workers); before, an ArrayBuffer, which posting would copy: each thread calls sharedMemory()
   * with the path.
   */
  readonly buffer: SharedArrayBuffer | ArrayBuffer;
  readonly byteLength: number;
  readonly path: string;
  /** Whether this call created the file. */
  readonly created: boolean;
}

export interface SharedMemoryOptions {
  /** Bytes for primitives, a multiple of 8 (default 4096 when creating; an existing file's own). */
  size?: number;
  /** The new file's mode (default 0o600). */
  mode?: number;
  /** Create the file if it does not exist (default true), with O_EXCL, never through a symlink. */
  create?: boolean;
}

/**
 * Opens or creates the region at `path`. Throws Node's fs errors (ENOENT, ELOOP, ...) and
 * ERR_PARKLOCK_REGION_INVALID / _VERSION / _SIZE / _OWNER / _LIMIT for files it refuses.
 */
export function sharedMemory(path: string | URL, options?: SharedMemoryOptions): SharedMemory;
