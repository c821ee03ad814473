'use strict';
// Memory:
//   bytes        shared memory per primitive, from the classes' BYTES (reported by info())
//   rss-1M       RSS and heap growth over 1,000,000 uncontended `await lockAsync()` + unlock
//                cycles on the main thread, measured between forced GCs (child runs with
//                --expose-gc) after a warm-up, so JIT code and heap sizing are not counted
//   rss-contend  the same over cycles that mostly have to wait, behind a worker that holds the
//                lock most of the time: exercises the addon's async waiters, not just the CAS
//   pending-10k  10,000 async waiters queued at once on one held lock; all must complete
const { implementation } = require('../support/implementations');
const { CONTROL, createControl, controlWords } = require('../support/control');
const { startWorkers, until, stopAndCollect } = require('../support/workers');
const { checkCount, checkControlCounter } = require('../support/check');

const MB = 1024 * 1024;
const PENDING_WAITERS = 10_000;

function collectGarbage() {
  if (typeof global.gc !== 'function') throw new Error('needs --expose-gc');
  // Twice: the first pass can leave objects that only the second finds unreachable (weak refs,
  // finalizers of the first).
  global.gc();
  global.gc();
}

function memory() {
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
}

async function cycles(lock, section, n) {
  for (let i = 0; i < n; i++) {
    const token = await lock.lockAsync();
    section();
    lock.unlock(token);
  }
}

async function measureGrowth(lock, section, count) {
  await cycles(lock, section, Math.min(100_000, count)); // warm-up
  await new Promise((resolve) => setImmediate(resolve));
  collectGarbage();
  const before = memory();
  const start = process.hrtime.bigint();
  await cycles(lock, section, count);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await new Promise((resolve) => setImmediate(resolve));
  collectGarbage();
  const after = memory();
  return {
    rssGrowthMB: (after.rss - before.rss) / MB,
    heapGrowthMB: (after.heapUsed - before.heapUsed) / MB,
    cycles: count,
    cyclesPerSec: count / seconds,
  };
}

async function rssUncontended(impl) {
  const lock = implementation(impl).openAsync(implementation(impl).create());
  const counter = new Int32Array(new SharedArrayBuffer(4));
  const count = 1_000_000;
  const metrics = await measureGrowth(lock, () => counter[0]++, count);
  checkCount(counter[0], count + 100_000);
  return metrics;
}

async function rssContended(impl, { quick, steps }) {
  const control = createControl();
  const ctl = controlWords(control);
  const lockShared = implementation(impl).create();
  const lock = implementation(impl).openAsync(lockShared);
  const group = startWorkers('sync_hammer', [{ impl, lockShared, control, steps, batch: 1 }], {
    timeLimitMs: 120_000,
  });
  await until(() => Atomics.load(ctl, CONTROL.READY) >= 1, group, 30_000, 'the worker to start');
  Atomics.store(ctl, CONTROL.GO, 1);
  Atomics.notify(ctl, CONTROL.GO);
  const count = quick ? 20_000 : 200_000;
  const section = () => {
    ctl[CONTROL.COUNTER] = ctl[CONTROL.COUNTER] + 1;
  };
  const metrics = await measureGrowth(lock, section, count);
  const [{ ops }] = await stopAndCollect(ctl, group);
  checkControlCounter(ctl, ops + count + Math.min(100_000, count));
  return metrics;
}

// 10,000 lockAsync() calls queued behind a holder, then released: counts the completions.
async function pendingWaiters(impl) {
  const { crossThread, create, openAsync } = implementation(impl);
  const lockShared = create();
  const lock = openAsync(lockShared);
  const control = createControl();
  const ctl = controlWords(control);
  let release;
  let group;
  if (crossThread) {
    // Another thread holds it, so every waiter really queues (in the addon for parklock, as an
    // Atomics.waitAsync for the V8-blog lock).
    group = startWorkers('lock_holder', [{ impl, lockShared, control }], { timeLimitMs: 60_000 });
    await until(() => Atomics.load(ctl, CONTROL.READY) === 1, group, 30_000, 'the holder');
    release = () => {
      Atomics.store(ctl, CONTROL.RELEASE, 1);
      Atomics.notify(ctl, CONTROL.RELEASE);
    };
  } else {
    // async-mutex lives in one thread: this thread holds it itself.
    const token = await lock.lockAsync();
    release = () => lock.unlock(token);
  }
  let completed = 0;
  const waiters = [];
  for (let i = 0; i < PENDING_WAITERS; i++) {
    waiters.push(
      lock.lockAsync().then((token) => {
        completed++;
        ctl[CONTROL.COUNTER] = ctl[CONTROL.COUNTER] + 1;
        lock.unlock(token);
      }),
    );
  }
  await new Promise((resolve) => setImmediate(resolve));
  if (completed !== 0) throw new Error(`${completed} waiters got a lock that another thread holds`);
  const start = process.hrtime.bigint();
  release();
  let timer;
  const limit = new Promise((resolve) => {
    timer = setTimeout(resolve, 30_000);
  });
  await Promise.race([Promise.all(waiters), limit]);
  clearTimeout(timer);
  const drainMs = Number(process.hrtime.bigint() - start) / 1e6;
  if (group) {
    await group.finished;
    if (group.problems.length > 0) throw new Error(group.problems.join('; '));
  }
  if (completed !== PENDING_WAITERS) {
    throw new Error(`only ${completed} of ${PENDING_WAITERS} pending waiters completed within 30 s`);
  }
  checkControlCounter(ctl, PENDING_WAITERS);
  return { completed, drainMs };
}

// Shared-memory bytes of every primitive lib/index.js exports, and of the baselines.
function info() {
  const lib = require('../../lib');
  const { DrepperMutex } = require('../baselines/drepper_mutex');
  const { V8BlogAsyncLock } = require('../baselines/v8_blog_async_lock');
  const bytes = {};
  for (const name of ['Mutex', 'Condition', 'Semaphore', 'RWLock', 'Barrier', 'Latch']) {
    const cls = lib[name];
    bytes[`parklock ${name}`] = cls && typeof cls.BYTES === 'number' ? cls.BYTES : 'not exported';
  }
  bytes['pure-JS 3-state (Drepper)'] = DrepperMutex.BYTES;
  bytes['V8-blog AsyncLock'] = V8BlogAsyncLock.BYTES;
  bytes['V8 Atomics.Mutex'] = 'n/a (object in V8 shared heap, not in a SharedArrayBuffer)';
  bytes['async-mutex'] = 'n/a (single-thread JS object)';
  return { title: 'Shared memory per primitive (bytes)', values: bytes };
}

module.exports = {
  title: 'Memory: RSS growth over async cycles; 10,000 pending waiters',
  cases: () => [
    ...['parklock', 'v8-blog', 'async-mutex'].map((impl) => ({ impl, param: 'rss-1M' })),
    ...['parklock', 'v8-blog'].map((impl) => ({ impl, param: 'rss-contend' })),
    ...['parklock', 'v8-blog', 'async-mutex'].map((impl) => ({ impl, param: 'pending-10k' })),
  ],
  paramLabel: 'case',
  metrics: [
    { key: 'rssGrowthMB', label: 'RSS growth MB', better: 'lower', digits: 2 },
    { key: 'heapGrowthMB', label: 'heap growth MB', better: 'lower', digits: 2 },
    { key: 'cycles', label: 'cycles', digits: 0 },
    { key: 'cyclesPerSec', label: 'cycles/s', better: 'higher', digits: 0 },
    { key: 'completed', label: 'completed', better: 'higher', digits: 0 },
    { key: 'drainMs', label: 'drain ms', better: 'lower', digits: 1 },
  ],
  baselines: [],
  execArgv: ['--expose-gc'],
  timeLimitMs: () => 120_000,
  info,

  async measure({ impl, param, quick, steps }) {
    let metrics;
    if (param === 'rss-1M') metrics = await rssUncontended(impl);
    else if (param === 'rss-contend') metrics = await rssContended(impl, { quick, steps });
    else metrics = await pendingWaiters(impl);
    return { metrics };
  },
};
