// Type-checked by test/package/types.sh against the packed package: every export of parklock,
// used as an ES module consumer would. Not run.
import parklock, {
  AsyncLock,
  Barrier,
  Condition,
  futex,
  inspect,
  Latch,
  layouts,
  Mutex,
  Once,
  RWLock,
  Semaphore,
  sharedMemory,
  locks,
  LockManager,
  Lock,
  PostgresLockManager,
  TimeoutError,
  watchdog,
  type AsyncWaitOptions,
  type DeadlockError,
  type DeadlockStep,
  type InspectedPrimitive,
  type InspectedWaiter,
  type WaitEvent,
  type FutexWaitResult,
  type Guard,
  type Permits,
  type PreviousRunDiedError,
  type SharedLocation,
  type SharedMemory,
  type SharedMemoryOptions,
  type LockInfo,
  type LockManagerSnapshot,
  type LockMode,
  type LockRequestOptions,
  type NamedLockGuard,
  type NamedLockOwner,
  type PostgresLock,
  type PostgresLockGuard,
} from 'parklock';

const options: AsyncWaitOptions = { timeout: 10, signal: AbortSignal.timeout(100) };

const mutex: Mutex = new parklock.Mutex();
const again: AsyncLock = new AsyncLock(mutex.buffer, mutex.byteOffset);
const location: SharedLocation = { buffer: again.buffer, byteOffset: again.byteOffset };
const attached = new Mutex(location);
{
  using guard = attached.lock();
  const released: boolean = guard.released;
  void released;
}
const guard: Guard = await mutex.lockAsync(options);
await guard[Symbol.asyncDispose]();
const doubled: number = await mutex.executeLocked(async () => 21 * 2);
const held: boolean = mutex.tryLock(5) && mutex.isLocked && mutex.isHeldByCurrentThread;
mutex.unlock();

const words = new Int32Array(new SharedArrayBuffer(Mutex.BYTES + Mutex.ALIGN));
const waited: FutexWaitResult = futex.wait(words, 0, 1, 0);
const woken: number = futex.notify(words, 0);
const later: FutexWaitResult = await futex.waitAsync(words, 0, 1, { timeout: 1 });

const condition = new Condition();
const notified: boolean = condition.wait(mutex, 1) || (await condition.waitAsync(mutex, options));
condition.notifyOne() + condition.notifyAll();

const latch = Latch.init(new SharedArrayBuffer(Latch.BYTES), 0, 2);
latch.countDown();
const open: boolean = latch.tryWait() || latch.wait(1) || (await latch.waitAsync()) || latch.count === 0;

const barrier = new Barrier(2);
const last: boolean = barrier.wait(1) || (await barrier.waitAsync(options)) || barrier.parties === 2;

const slots = new Semaphore(3);
slots.acquire();
const took: boolean = slots.tryAcquire(2, 0);
await slots.acquireAsync(1, options);
slots.release(Math.min(slots.available, Semaphore.MAX_PERMITS));

const rw = new RWLock();
const read: Guard = rw.lockShared();
read.unlock();
const write: Guard = await rw.lockAsync();
write[Symbol.dispose]();
const state: number = rw.readers + Number(rw.isLocked && rw.isWriteLocked && rw.isWriteLockedByCurrentThread);
rw.tryLock() && rw.tryLockShared(1);
await rw.lockSharedAsync(options);

try {
  await mutex.lockAsync({ timeout: 0 });
} catch (error) {
  if (error instanceof TimeoutError) {
    const code: 'ERR_PARKLOCK_TIMEOUT' = error.code;
    void code;
  }
}
const mutexBytes: number | undefined = layouts.mutex.BYTES;

// Conveniences: waitForUnlock, permit guards, executeLocked / executeShared, cancelPendingWaits.
const unlocked: void = await mutex.waitForUnlock(options);
const readersGone: void = await rw.waitForUnlock(options);
{
  using permits: Permits = slots.acquirePermits(2);
  const count: number = permits.permits;
  void count;
}
const maybe: Permits | null = slots.tryAcquirePermits(1, 5);
maybe?.release();
const asyncPermits: Permits = await slots.acquirePermitsAsync(1, options);
await asyncPermits[Symbol.asyncDispose]();
const bounded: string = await slots.executeLocked(async () => 'ran', 2, options);
const written: number = await rw.executeLocked(() => 1, options);
const shared: boolean = await rw.executeShared(async () => true);
const cancelled: number =
  mutex.cancelPendingWaits() +
  slots.cancelPendingWaits(new Error('shutdown')) +
  rw.cancelPendingWaits() +
  condition.cancelPendingWaits() +
  latch.cancelPendingWaits() +
  barrier.cancelPendingWaits('any reason');

export { doubled, held, waited, woken, later, notified, open, last, took, state, mutexBytes };
const entries: InspectedPrimitive[] = inspect();
const first: InspectedWaiter | undefined = entries[0]?.waiters[0];
const dog = watchdog({ thresholdMs: 500, onStall: (stalled, threshold) => void [stalled, threshold] });
dog.stop();
const waiting: number = mutex.waiting + rw.waiting + slots.waiting + latch.waiting;
const contended: boolean = condition.hasWaiters || barrier.hasWaiters;
const holders: (number | null)[] = [mutex.holder, rw.writer];
rw.downgrade();
const step: DeadlockStep | undefined = ({} as DeadlockError).cycle?.[0];
const event: WaitEvent = { primitive: 'mutex', blocking: true, threadId: 0, startTime: 0 };

const once = new Once(structuredClone(new Once()));
const ran: boolean =
  once.run((died: PreviousRunDiedError | undefined) => died?.threadId) ||
  (await once.runAsync(async (died) => void died?.code)) ||
  once.done;
const onceWaits: number = once.waiting + once.cancelPendingWaits() + Once.BYTES;
const onceBytes: number | undefined = layouts.once.BYTES;

export { unlocked, readersGone, bounded, written, shared, cancelled, ran, onceWaits, onceBytes };
export { first, waiting, contended, holders, step, event };

// Across processes: the same primitives over a file every process maps.
const regionOptions: SharedMemoryOptions = { size: 4096, mode: 0o600, create: true };
const region: SharedMemory = sharedMemory(new URL('file:///tmp/app.locks'), regionOptions);
const regionBytes: number = region.byteLength + (region.created ? 0 : 1) + region.path.length;
const regionMutex = new Mutex(region, 0);
const holder: number | null = regionMutex.holderProcess;
const regionSlots = Semaphore.init(region, 8, 3);
const regionLatch: Latch = Latch.init(region, 16, 2);
Barrier.init(region, 24, 2);
const regionBarrier = new Barrier(region, 24);
const placedLatch: Latch = region.place(56, Latch, 2);
const placedSlots: Semaphore = region.place(60, Semaphore);
const placedMutex: Mutex = region.place(64, Mutex);
const placedBarrier: Barrier = region.place(68, Barrier, 2);
// @ts-expect-error a Latch needs its count
region.place(76, Latch);
const regionOnce = new Once(region, 32);
const regionCondition = new Condition(region, 40);
const regionRw = new RWLock(region, 48);
const writerPid: number | null = regionRw.writerProcess ?? regionRw.upgraderProcess;
const regionWait: Promise<boolean> = regionCondition.waitAsync(regionMutex, { timeout: 10 });
void [regionBytes, holder, regionSlots.available, regionLatch.count, regionBarrier.parties, placedLatch.count, placedSlots.available, placedMutex.isLocked, placedBarrier.parties, regionOnce.done, regionWait, writerPid];

// Named locks: the process's own manager and a lock file, with the Web Locks API and guards.
const requestOptions: LockRequestOptions = { mode: 'shared', signal: AbortSignal.timeout(100), timeout: 50 };
const answer: number = await locks.request('cache', async (lock: Lock) => (lock.ownerDied ? 0 : 42));
const sharedName: string = await locks.request('cache', { mode: 'shared', timeout: 50 }, (lock) => lock.name);
// Options whose ifAvailable is not known to be false: the callback may get null.
const maybeName: string | undefined = await locks.request('cache', requestOptions, (lock) => lock?.name);
const available: boolean = await locks.request('cache', { ifAvailable: true }, (lock: Lock | null) => lock !== null);
await locks.request('cache', { steal: true }, () => {});
const lockFile = new LockManager('/tmp/app-named.locks', { mode: 0o600 });
const filePath: string | null = lockFile.path ?? locks.path;
{
  using named: NamedLockGuard = lockFile.lock('job', { mode: 'exclusive', timeout: 1000 });
  const dead: NamedLockOwner | null = named.deadOwner;
  const modeHeld: LockMode = named.mode;
  void [dead?.pid, dead?.threadId, modeHeld, named.ownerDied, named.released];
}
const tried: NamedLockGuard | null = locks.tryLock('job', { mode: 'shared' });
tried?.unlock();
const snapshot: LockManagerSnapshot = await lockFile.query();
const entry: LockInfo | undefined = snapshot.held[0] ?? snapshot.pending[0];
void [answer, sharedName, maybeName, available, filePath, entry?.clientId, entry?.pid, entry?.threadId, entry?.name, entry?.mode];
// @ts-expect-error: a mode is 'exclusive' or 'shared'
locks.tryLock('job', { mode: 'read' });
// @ts-expect-error: without ifAvailable the callback's lock is never null
await locks.request('job', (lock: null) => lock);

// The PostgreSQL manager: the same request(), an async tryLock(), fencing tokens.
const remote = new PostgresLockManager('postgres://localhost/app', { schema: 'locks' });
const fenced: number = await remote.request('job', (lock: PostgresLock) => lock.token);
const maybeRemote: PostgresLockGuard | null = await remote.tryLock('job', { mode: 'shared' });
await maybeRemote?.unlock();
const lost: AbortSignal | undefined = maybeRemote?.signal;
void fenced;
void lost;
await remote.end();
