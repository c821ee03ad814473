'use strict';
// (6) Mixed: 2 workers (and on a machine with 16 cores, 15: one per core beside the main thread)
// keep the lock busy with its blocking form (tiny critical section) while the main thread takes
// it N times, each time measuring how long it waited, with an event-loop
// turn (setImmediate) between takes as a real main thread would have.
//
// Main-thread path per implementation:
//   parklock   await mutex.lockAsync()   (event loop stays free while waiting)
//   v8-blog    await lock.lockAsync()    (Atomics.waitAsync; event loop stays free)
//   drepper    lock.lock()               (Atomics.wait: the main thread's event loop is frozen
//                                          while it waits; the pure-JS three-state mutex has no
//                                          async form, so this is what a user of it would do)
//   control    await an event-loop turn (setImmediate), no lock; the workers use the pure-JS
//              lock. Not an implementation: the floor of what a "wait" on the main thread costs
//              on this machine while two workers keep both cores busy (OS scheduling noise).
// Reported: the main thread's p50/p99/max wait and the total throughput (workers + main).
const { implementation } = require('../support/implementations');
const { CONTROL, createControl, controlWords } = require('../support/control');
const { startWorkers, openGateWhenReady, stopAndCollect } = require('../support/workers');
const { checkControlCounter } = require('../support/check');
const { percentile, max } = require('../support/stats');
const { hasManyCores, MANY_CORES } = require('../support/worker_counts');
const CONTROL_ROW = 'control';
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

// Returns an async function that takes the lock once, runs `section` and releases it.
function mainThreadTake(impl, lockShared) {
  const { async, openAsync, openSync } = implementation(impl);
  if (async) {
    const lock = openAsync(lockShared);
    return async (section) => {
      const token = await lock.lockAsync();
      section();
      lock.unlock(token);
    };
  }
  const lock = openSync(lockShared);
  return async (section) => {
    lock.lock();
    section();
    lock.unlock();
  };
}

module.exports = {
  title: 'Mixed: sync workers busy + main thread taking the lock N times',
  implementations: ['parklock', 'v8-blog', 'drepper', CONTROL_ROW],
  labels: {
    [CONTROL_ROW]: 'control: event-loop turn, no lock',
    parklock: 'parklock (main: await lockAsync)',
    'v8-blog': 'V8-blog (main: await waitAsync lock)',
    drepper: 'pure-JS 3-state (main: sync lock)',
  },
  params: () => [2, ...(hasManyCores() ? [MANY_CORES - 1] : [])],
  paramLabel: 'busy workers',
  metrics: [
    { key: 'takes', label: 'main takes', digits: 0 },
    { key: 'p50Us', label: 'main p50 µs', better: 'lower', digits: 1 },
    { key: 'p99Us', label: 'main p99 µs', better: 'lower', digits: 1 },
    { key: 'maxMs', label: 'main max ms', better: 'lower', digits: 2 },
    { key: 'totalOpsPerSec', label: 'total ops/s', better: 'higher', digits: 0 },
  ],
  primary: 'totalOpsPerSec',
  timeLimitMs: () => 60_000,

  async measure({ impl, param: busyWorkers, quick }) {
    // At least this many takes and at least this long: a short run would mostly measure workers
    // that are still starting up.
    const minTakes = quick ? 300 : 2_000;
    const minDurationMs = quick ? 300 : 1_000;
    const control = createControl();
    const ctl = controlWords(control);
    const isControl = impl === CONTROL_ROW;
    const workerImpl = isControl ? 'drepper' : impl;
    const lockShared = implementation(workerImpl).create();
    // The control row's main thread touches neither the lock nor the counter.
    const take = isControl ? () => nextTurn() : mainThreadTake(impl, lockShared);
    const section = isControl ? () => {} : () => {
      ctl[CONTROL.COUNTER] = ctl[CONTROL.COUNTER] + 1;
    };
    // Warm the main thread's path up on a private lock, before the workers exist.
    const privateTake = isControl ? take : mainThreadTake(impl, implementation(impl).create());
    for (let i = 0; i < 2_000; i++) await privateTake(() => {});

    const group = startWorkers(
      'sync_hammer',
      Array.from({ length: busyWorkers }, () =>
        ({ impl: workerImpl, lockShared, control, steps: 0, batch: 32 })),
      { timeLimitMs: 50_000 },
    );
    const opened = await openGateWhenReady(ctl, busyWorkers, group);
    const deadline = Date.now() + minDurationMs;
    const waitsNs = [];
    while (waitsNs.length < minTakes || Date.now() < deadline) {
      const start = process.hrtime.bigint();
      await take(section);
      waitsNs.push(Number(process.hrtime.bigint() - start));
      await nextTurn();
      if (group.problems.length > 0) throw new Error(group.problems.join('; '));
    }
    const mainDone = process.hrtime.bigint();
    const results = await stopAndCollect(ctl, group);
    const workerOps = results.reduce((a, r) => a + r.ops, 0);
    const mainOps = isControl ? 0 : waitsNs.length;
    checkControlCounter(ctl, workerOps + mainOps);
    const last = results.reduce((a, r) => (r.end > a ? r.end : a), mainDone);
    return {
      metrics: {
        takes: waitsNs.length,
        p50Us: percentile(waitsNs, 50) / 1e3,
        p99Us: percentile(waitsNs, 99) / 1e3,
        maxMs: max(waitsNs) / 1e6,
        totalOpsPerSec: (workerOps + mainOps) / (Number(last - opened) / 1e9),
      },
    };
  },
};
