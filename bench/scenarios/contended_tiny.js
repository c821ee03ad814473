'use strict';
// (3) Contended sync: 1, 2, 4, 8 workers hammering one lock, and 16 on a machine with that many
// cores, where the targets ask how the lock scales; the critical section only increments the
// protected counter, so the numbers are the lock's hand-over costs.
const os = require('node:os');
const { measureContended } = require('../support/contended');

// 16 workers on fewer cores would measure the scheduler, and take a while to.
const WORKER_COUNTS = os.availableParallelism() >= 16 ? [1, 2, 4, 8, 16] : [1, 2, 4, 8];

module.exports = {
  title: 'Contended sync, tiny critical section (counter++)',
  implementations: ['parklock', 'drepper', 'v8-blog', 'v8-atomics'],
  params: () => WORKER_COUNTS,
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
