'use strict';
// RWLock write contention: 1, 2, 4, 8 workers (16 on a machine with that many cores) taking the
// write side of one RWLock in a loop, the critical section only incrementing the protected
// counter, beside parklock's Mutex over the same sections. Both let running threads barge between
// fair turns (addon/primitives/rwlock.cpp, "Barging"); what remains between the two rows is the RWLock's
// second word, the owner, which every acquisition and release writes beside the state.
const { measureContended, CONTENDED_METRICS } = require('../support/contended');
const { workerCounts } = require('../support/worker_counts');

module.exports = {
  title: 'RWLock write contention, tiny critical section (counter++)',
  implementations: ['parklock-write', 'parklock', 'js-rwlock-write'],
  params: () => workerCounts(),
  paramLabel: 'workers',
  metrics: CONTENDED_METRICS,
  timeLimitMs: () => 35_000,

  measure: ({ impl, param, quick }) =>
    measureContended({ impl, workers: param, steps: 0, durationMs: quick ? 150 : 500, batch: 32 }),
};
