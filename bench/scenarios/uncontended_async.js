'use strict';
// (2) Uncontended async: `await lockAsync()` + unlock on one thread. Nobody else holds the lock,
// so this measures the Promise machinery of each design: parklock resolves an already-settled
// Promise after its CAS, the V8-blog lock is an async function around its CAS, async-mutex runs
// its semaphore's queue logic.
const { implementation } = require('../support/implementations');
const { min } = require('../support/stats');
const { checkCount } = require('../support/check');

async function asyncLoop(lock, counter, n) {
  for (let i = 0; i < n; i++) {
    const token = await lock.lockAsync();
    counter[0]++;
    lock.unlock(token);
  }
}

module.exports = {
  title: 'Uncontended async: await lockAsync() + unlock, 1 thread',
  implementations: ['parklock', 'v8-blog', 'async-mutex'],
  params: () => [null],
  metrics: [{ key: 'nsPerOp', label: 'ns/op', better: 'lower', digits: 1 }],
  timeLimitMs: () => 30_000,

  async measure({ impl, quick }) {
    const { create, openAsync } = implementation(impl);
    const lock = openAsync(create());
    const counter = new Int32Array(new SharedArrayBuffer(4));
    const batch = quick ? 50_000 : 100_000;
    const samples = quick ? 5 : 15;
    for (let i = 0; i < 5; i++) await asyncLoop(lock, counter, batch);
    const nsPerOp = [];
    for (let s = 0; s < samples; s++) {
      const start = process.hrtime.bigint();
      await asyncLoop(lock, counter, batch);
      nsPerOp.push(Number(process.hrtime.bigint() - start) / batch);
    }
    checkCount(counter[0], (5 + samples) * batch);
    // The fastest batch: on a shared machine interference only ever adds time, so for a
    // single-threaded loop the minimum is the best estimate of its own cost. (The runner then
    // takes the median of these over the repetitions.)
    return { metrics: { nsPerOp: min(nsPerOp) } };
  },
};
