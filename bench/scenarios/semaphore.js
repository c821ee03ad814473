'use strict';
// Semaphore: N workers share a few permits (support/implementations.js), each taking one,
// incrementing a counter and giving it back, in a loop; parklock's Semaphore against the
// semaphore a user would write with Atomics.wait/notify. Every entry checks that no more threads
// than permits are inside (workers/sync_hammer.js).
const { measureContended, CONTENDED_METRICS } = require('../support/contended');
const { workerCounts } = require('../support/worker_counts');

module.exports = {
  title: 'Semaphore: N workers sharing 4 permits, tiny section',
  implementations: ['parklock-semaphore', 'js-semaphore'],
  params: () => workerCounts({ from: 2 }),
  paramLabel: 'workers',
  metrics: CONTENDED_METRICS,
  baselines: ['js-semaphore'],
  timeLimitMs: () => 35_000,

  measure: ({ impl, param, quick }) =>
    measureContended({ impl, workers: param, steps: 0, durationMs: quick ? 150 : 500, batch: 32 }),
};
