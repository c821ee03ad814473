'use strict';
// (4) Contended sync with a longer critical section: ~2 µs of busy work under the lock (the
// number of steps is calibrated once per run, identical for every implementation). With more
// work per hold, waiters really sleep, so parking and waking costs dominate over spinning.
const { measureContended } = require('../support/contended');

module.exports = {
  title: 'Contended sync, ~2 µs critical section',
  implementations: ['parklock', 'drepper', 'v8-blog', 'v8-atomics'],
  params: () => [1, 2, 4, 8],
  paramLabel: 'workers',
  metrics: [
    { key: 'opsPerSec', label: 'ops/s', better: 'higher', digits: 0 },
    { key: 'fairness', label: 'min/max share', better: 'higher', digits: 2 },
  ],
  timeLimitMs: () => 35_000,
  chart: true,

  measure: ({ impl, param, quick, steps }) =>
    measureContended({ impl, workers: param, steps, durationMs: quick ? 150 : 500, batch: 4 }),
};
