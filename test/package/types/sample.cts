// Type-checked by test/package/types.sh: the CommonJS entry, as `require` sees it. Not run.
import parklock = require('parklock');

const { Mutex, Semaphore, RWLock, Latch, Once, Barrier, Condition, futex, TimeoutError, layouts, sharedMemory } = parklock;
const mutex = new Mutex();
const guard: parklock.Guard = mutex.lock();
guard.unlock();
const slots = new Semaphore(1);
const rw = new RWLock();
const latch = new Latch(1);
const once: boolean = new Once().run(() => {});
const barrier = new Barrier(1);
const condition = new Condition();
const words = new Int32Array(new SharedArrayBuffer(4));
const result: parklock.FutexWaitResult = futex.wait(words, 0, 1, 0);
const timeout: typeof TimeoutError = TimeoutError;
const region: parklock.SharedMemory = sharedMemory('/tmp/app.locks', { create: false });
const regionSlots = region.place(0, Semaphore, 3);
const regionReady = new Condition(region, 8);
const regionRw = new RWLock(region, 16);
const { locks, LockManager } = parklock;
const named: parklock.NamedLockGuard | null = new LockManager('/tmp/app-named.locks').tryLock('job');
named?.unlock();
const queried: Promise<parklock.LockManagerSnapshot> = locks.query();
const requested: Promise<string> = locks.request('job', { mode: 'shared' }, (lock) => lock.mode);
// The CommonJS entry has no default export.
// @ts-expect-error
void parklock.default;

export = { slots, rw, latch, once, barrier, condition, result, timeout, layouts, regionSlots, regionReady, regionRw, queried, requested };
