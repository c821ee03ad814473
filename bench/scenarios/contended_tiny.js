'use strict';
// (3) Contended sync: 1, 2, 4, 8 workers hammering one lock, and 16 on a machine with that many
// cores, where the targets ask how the lock scales; the critical section only increments the
// protected counter, so the numbers are the lock's hand-over costs.
const { measureContended, CONTENDED_METRICS } = require('../support/contended');
const { workerCounts } = require('../support/worker_counts');

module.exports = {
  title: 'Contended sync, tiny critical section (counter++)',
  implementations: ['parklock', 'drepper', 'v8-blog', 'v8-atomics'],
  params: () => workerCounts(),
  paramLabel: 'workers',
  metrics: CONTENDED_METRICS,
  timeLimitMs: () => 35_000,
  chart: true,

  measure: ({ impl, param, quick }) =>
    measureContended({ impl, workers: param, steps: 0, durationMs: quick ? 150 : 500, batch: 32 }),
};
