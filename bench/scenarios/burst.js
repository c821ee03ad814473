'use strict';
// Short burst vs steady state: 4 workers (and 16 on a machine with that many cores), each taking
// and releasing one lock `count` times from a cold start (no warm-up), tiny critical section.
// 100,000 each is a burst, where the first contended operations (unoptimized code, a thread's
// first entry into the addon) weigh; 1,000,000 each is close to the steady state.
const { implementation } = require('../support/implementations');
const { createControl, controlWords } = require('../support/control');
const { startWorkers, openGateWhenReady } = require('../support/workers');
const { checkControlCounter } = require('../support/check');
const { hasManyCores, MANY_CORES } = require('../support/worker_counts');

// "4 x 100000" -> { workers: 4, count: 100000 }
function parseParam(param) {
  const [workers, count] = param.split(' x ').map(Number);
  return { workers, count };
}

module.exports = {
  title: 'Burst vs steady state: W workers x N lock/unlock each, from a cold start',
  implementations: ['parklock', 'drepper', 'v8-atomics'],
  params: ({ quick }) => [4, ...(hasManyCores() ? [MANY_CORES] : [])].flatMap((workers) =>
    (quick ? [100_000] : [100_000, 1_000_000]).map((count) => `${workers} x ${count}`)),
  paramLabel: 'workers x ops each',
  metrics: [{ key: 'opsPerSec', label: 'ops/s', better: 'higher', digits: 0 }],
  baselines: ['drepper'],
  timeLimitMs: () => 60_000,

  async measure({ impl, param }) {
    const { workers, count } = parseParam(param);
    const control = createControl();
    const ctl = controlWords(control);
    const lockShared = implementation(impl).create();
    const group = startWorkers(
      'burst_hammer',
      Array.from({ length: workers }, () => ({ impl, lockShared, control, count })),
      { timeLimitMs: 55_000 },
    );
    await openGateWhenReady(ctl, workers, group);
    await group.finished;
    if (group.problems.length > 0) throw new Error(group.problems.join('; '));
    checkControlCounter(ctl, workers * count);
    const first = group.results.reduce((a, r) => (r.start < a ? r.start : a), group.results[0].start);
    const last = group.results.reduce((a, r) => (r.end > a ? r.end : a), group.results[0].end);
    return { metrics: { opsPerSec: (workers * count) / (Number(last - first) / 1e9) } };
  },
};
