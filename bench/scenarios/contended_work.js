'use strict';
// (4) Contended sync with a longer critical section: ~2 µs of busy work under the lock (the
// number of steps is calibrated once per run, identical for every implementation). With more
// work per hold, waiters really sleep, so parking and waking costs dominate over spinning.
const { measureContended, CONTENDED_METRICS } = require('../support/contended');
const { workerCounts } = require('../support/worker_counts');

module.exports = {
  title: 'Contended sync, ~2 µs critical section',
  implementations: ['parklock', 'drepper', 'v8-blog', 'v8-atomics'],
  params: () => workerCounts(),
  paramLabel: 'workers',
  metrics: CONTENDED_METRICS,
  timeLimitMs: () => 35_000,
  chart: true,

  measure: ({ impl, param, quick, steps }) =>
    measureContended({ impl, workers: param, steps, durationMs: quick ? 150 : 500, batch: 4 }),
};
