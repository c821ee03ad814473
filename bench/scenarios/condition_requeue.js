'use strict';
// Condition notifyAll() with requeue vs waking everyone.
//
// W workers hold `waiters` condition waiters each (sync: one blocked thread per worker; async:
// many waitAsync tasks per worker), all waiting on one Condition with one Mutex. The main thread
// takes the mutex, bumps GENERATION, and then either
//   requeue     calls notifyAll() once: the waiters are moved onto the mutex's queue and then
//               woken one by one by each unlock, or
//   notify-one  calls notifyOne() once per waiter: every waiter is woken at once and they all
//               fight for the mutex (the "wake everyone" a condition without requeue does),
// releases the mutex, and the time is taken until every waiter has passed through the mutex
// (each does counter++ under it). Reported: the median over the rounds of one run, and for
// blocked waiters (sync) how many wake-ups per round were futile (the woken waiter found the mutex
// taken and parked on it again) among those that competed for the mutex, and how many waiters
// were handed the mutex while still asleep (a fairness hand-off: the mutex waits for them).
const { Mutex, Condition } = require('../../lib');
const { CONTROL, createControl, controlWords } = require('../support/control');
const { startWorkers, until } = require('../support/workers');
const { checkControlCounter, checkCount } = require('../support/check');
const { median } = require('../support/stats');

// "sync 8x1" -> { mode: 'sync', workers: 8, waiters: 1 }
function parseParam(param) {
  const [, mode, workers, waiters] = /^(sync|async) (\d+)x(\d+)$/.exec(param);
  return { mode, workers: Number(workers), waiters: Number(waiters) };
}

// Blocks this thread until ctl[index] >= target; throws after deadline (ms since epoch).
function blockUntilAtLeast(ctl, index, target, deadline, what) {
  for (let seen; (seen = Atomics.load(ctl, index)) < target;) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (${seen} of ${target})`);
    Atomics.wait(ctl, index, seen, 100);
  }
}

module.exports = {
  title: 'Condition: notifyAll (requeue) vs notifyOne x N (wake all), time until all passed',
  cases: () =>
    ['sync 4x1', 'sync 8x1', 'sync 16x1', 'async 8x16'].flatMap((param) =>
      ['requeue', 'notify-one'].map((impl) => ({ impl, param }))),
  labels: { requeue: 'notifyAll (requeue)', 'notify-one': 'notifyOne x N (wake all)' },
  paramLabel: 'waiters',
  metrics: [
    { key: 'roundUs', label: 'µs until all passed', better: 'lower', digits: 0 },
    { key: 'perWaiterUs', label: 'µs per waiter', better: 'lower', digits: 2 },
    { key: 'wokenPerRound', label: 'woken to compete per round', better: 'lower', digits: 1 },
    { key: 'futilePerRound', label: 'futile wake-ups per round', better: 'lower', digits: 2 },
    { key: 'handedOffPerRound', label: 'handed the mutex asleep per round', better: 'lower', digits: 2 },
  ],
  baselines: ['notify-one'],
  timeLimitMs: () => 90_000,

  async measure({ impl, param, quick }) {
    const { mode, workers, waiters } = parseParam(param);
    const total = workers * waiters;
    const rounds = quick ? 8 : 30;
    const mutex = new Mutex();
    const condition = new Condition();
    const control = createControl();
    const ctl = controlWords(control);
    const group = startWorkers(
      'condition_waiter',
      Array.from({ length: workers }, () => ({
        mutexLocation: { buffer: mutex.buffer, byteOffset: mutex.byteOffset },
        conditionLocation: { buffer: condition.buffer, byteOffset: condition.byteOffset },
        control,
        mode,
        waiters,
        rounds,
        total,
      })),
      { timeLimitMs: 80_000 },
    );
    const roundNs = [];
    for (let round = 1; round <= rounds; round++) {
      group.workers.forEach((worker) => worker.postMessage({ type: 'round', round }));
      await until(() => Atomics.load(ctl, CONTROL.ARRIVED) >= total * round, group, 30_000,
        'the waiters to arrive');
      // Every waiter counted itself while holding the mutex and releases it only from inside
      // its wait, once queued on the condition: holding the mutex now means all are queued.
      mutex.lock();
      const start = process.hrtime.bigint();
      Atomics.store(ctl, CONTROL.GENERATION, round);
      let notified = 0;
      if (impl === 'requeue') notified = condition.notifyAll();
      else for (let i = 0; i < total; i++) notified += condition.notifyOne();
      mutex.unlock();
      blockUntilAtLeast(ctl, CONTROL.PASSED, total * round, Date.now() + 30_000, 'the waiters to pass');
      roundNs.push(Number(process.hrtime.bigint() - start));
      checkCount(notified, total, 'waiters notified');
    }
    await group.finished;
    if (group.problems.length > 0) throw new Error(group.problems.join('; '));
    checkControlCounter(ctl, total * rounds);
    const roundUs = median(roundNs) / 1e3;
    const metrics = { roundUs, perWaiterUs: roundUs / total };
    if (mode === 'sync') {
      const sum = (key) => group.results.reduce((acc, r) => acc + r.wakeUps[key], 0);
      metrics.wokenPerRound = sum('woken') / rounds;
      metrics.futilePerRound = sum('futile') / rounds;
      metrics.handedOffPerRound = sum('handedOff') / rounds;
    }
    return { metrics };
  },
};
