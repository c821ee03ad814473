'use strict';
// (5) All-async contention: every worker uses only the Promise form. The question is first
// whether every run completes at all (the V8-blog lock's workers tend to exit early: a pending
// Atomics.waitAsync does not keep a worker alive), then how fast. A worker that exits without
// reporting 'done' makes the run FAILED; a run that overruns its time limit is terminated.
const { implementation } = require('../support/implementations');
const { createControl, controlWords } = require('../support/control');
const { startWorkers, openGateWhenReady } = require('../support/workers');
const { checkControlCounter } = require('../support/check');

module.exports = {
  title: 'All-async contention across workers (lockAsync/executeLocked only)',
  implementations: ['parklock', 'v8-blog'],
  params: () => [2, 4],
  paramLabel: 'workers',
  metrics: [{ key: 'opsPerSec', label: 'ops/s', better: 'higher', digits: 0 }],
  timeLimitMs: (quick) => (quick ? 20_000 : 45_000),

  async measure({ impl, param: workers, quick }) {
    const iterations = quick ? 3_000 : 20_000;
    const control = createControl();
    const ctl = controlWords(control);
    const lockShared = implementation(impl).create();
    const group = startWorkers(
      'async_hammer',
      Array.from({ length: workers }, () => ({ impl, lockShared, control, iterations })),
      { timeLimitMs: quick ? 15_000 : 40_000 },
    );
    await openGateWhenReady(ctl, workers, group);
    await group.finished;
    if (group.problems.length > 0) throw new Error(group.problems.join('; '));
    checkControlCounter(ctl, workers * iterations);
    const first = group.results.reduce((a, r) => (r.start < a ? r.start : a), group.results[0].start);
    const last = group.results.reduce((a, r) => (r.end > a ? r.end : a), group.results[0].end);
    return { metrics: { opsPerSec: (workers * iterations) / (Number(last - first) / 1e9) } };
  },
};
