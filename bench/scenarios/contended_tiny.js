'use strict';
// (3) Contended sync: 1, 2, 4, 8 workers hammering one lock; the critical section only
// increments the protected counter, so the numbers are the lock's hand-over costs.
const { measureContended } = require('../support/contended');

module.exports = {
  title: 'Contended sync, tiny critical section (counter++)',
  implementations: ['parklock', 'drepper', 'v8-blog', 'v8-atomics'],
  params: () => [1, 2, 4, 8],
  paramLabel: 'workers',
  metrics: [
    { key: 'opsPerSec', label: 'ops/s', better: 'higher', digits: 0 },
    { key: 'fairness', label: 'min/max share', better: 'higher', digits: 2 },
  ],
  timeLimitMs: () => 35_000,
  chart: true,

  measure: ({ impl, param, quick }) =>
    measureContended({ impl, workers: param, steps: 0, durationMs: quick ? 150 : 500, batch: 32 }),
};
