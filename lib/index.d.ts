// Type declarations for parklock, one file a primitive in ./types/. Each primitive lives in shared
// memory: construct it in one thread, pass it to others with postMessage / workerData (it arrives
// as { buffer, byteOffset }), and rebuild it there with `new X(received)`.
export * from './types/shared.js';
export * from './types/mutex.js';
export * from './types/futex.js';
export * from './types/condition.js';
export * from './types/latch.js';
export * from './types/once.js';
export * from './types/barrier.js';
export * from './types/semaphore.js';
export * from './types/rwlock.js';
export * from './types/diagnostics.js';
export * from './types/shared_region.js';
export * from './types/named_locks.js';
export * from './types/postgres_locks.js';

/** The shared-memory layouts, as the addon defines them (see addon/primitives/*.h). */
export const layouts: {
  readonly mutex: Readonly<Record<string, number>>;
  readonly condition: Readonly<Record<string, number>>;
  readonly latch: Readonly<Record<string, number>>;
  readonly once: Readonly<Record<string, number>>;
  readonly barrier: Readonly<Record<string, number>>;
  readonly semaphore: Readonly<Record<string, number>>;
  readonly rwlock: Readonly<Record<string, number>>;
};
