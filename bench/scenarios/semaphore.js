'use strict';
// Semaphore: N workers share 2 or 4 permits (support/implementations.js), each taking one,
// incrementing a counter and giving it back, in a loop; parklock's Semaphore against the
// semaphore a user would write with Atomics.wait/notify. Every entry checks that no more threads
// than permits are inside (workers/sync_hammer.js). parklock's Promise form (`await
// acquireAsync()` per permit) is a row of its own, against the same blocking baseline.
//
// A case is "workers x permits": 4, 8 and 16 workers over 2 and 4 permits, never fewer workers
// than permits, so that acquisitions contend (16 workers run on any machine here: the number of
// waiters, not the cores, is what the scenario is about).
const { measureContended, CONTENDED_METRICS } = require('../support/contended');

const WORKERS = [4, 8, 16];
const PERMITS = [2, 4];

const parse = (param) => param.split(' x ').map(Number);

module.exports = {
  title: 'Semaphore: N workers sharing P permits, tiny section',
  implementations: ['parklock-semaphore', 'parklock-semaphore-async', 'js-semaphore'],
  params: () => PERMITS.flatMap((permits) => WORKERS.map((workers) => `${workers} x ${permits}`)),
  paramLabel: 'workers x permits',
  metrics: CONTENDED_METRICS,
  baselines: ['js-semaphore'],
  timeLimitMs: () => 35_000,

  measure: ({ impl, param, quick }) => {
    const [workers, permits] = parse(param);
    return measureContended({ impl, workers, permits, steps: 0, durationMs: quick ? 150 : 500, batch: 32 });
  },
};
