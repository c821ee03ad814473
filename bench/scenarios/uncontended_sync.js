'use strict';
// (1) Uncontended sync lock + unlock on one thread, in a tight loop: the cost of the fast paths
// alone (for parklock: one CAS to lock, one to unlock, and the guard that lock() hands out again).
const { implementation } = require('../support/implementations');
const { min } = require('../support/stats');
const { checkCount } = require('../support/check');

function lockUnlockLoop(lock, counter, n) {
  for (let i = 0; i < n; i++) {
    lock.lock();
    counter[0]++;
    lock.unlock();
  }
}

// Atomics.Mutex has only the callback-scoped form.
function runLockedLoop(lock, increment, n) {
  for (let i = 0; i < n; i++) lock.runLocked(increment);
}

module.exports = {
  title: 'Uncontended sync lock+unlock, 1 thread',
  implementations: ['parklock', 'drepper', 'v8-blog', 'v8-atomics'],
  params: () => [null],
  metrics: [{ key: 'nsPerOp', label: 'ns/op', better: 'lower', digits: 1 }],
  timeLimitMs: () => 30_000,

  async measure({ impl, quick }) {
    const { create, openSync } = implementation(impl);
    const lock = openSync(create());
    const counter = new Int32Array(new SharedArrayBuffer(4));
    const increment = () => {
      counter[0]++;
    };
    const loop = typeof lock.runLocked === 'function'
      ? (n) => runLockedLoop(lock, increment, n)
      : (n) => lockUnlockLoop(lock, counter, n);

    const batch = quick ? 100_000 : 200_000;
    const samples = quick ? 5 : 15;
    // Warm-up: long enough for TurboFan to optimize the loop before anything is timed.
    for (let i = 0; i < 5; i++) loop(batch);
    const nsPerOp = [];
    for (let s = 0; s < samples; s++) {
      const start = process.hrtime.bigint();
      loop(batch);
      nsPerOp.push(Number(process.hrtime.bigint() - start) / batch);
    }
    checkCount(counter[0], (5 + samples) * batch);
    // The fastest batch: on a shared machine interference only ever adds time, so for a
    // single-threaded loop the minimum is the best estimate of its own cost. (The runner then
    // takes the median of these over the repetitions.)
    return { metrics: { nsPerOp: min(nsPerOp) } };
  },
};
