'use strict';
// Shared by the two contended-sync scenarios: N workers hammer one lock for a fixed time; the
// result is the total throughput, plus how evenly the workers shared the lock.
const { implementation } = require('./implementations');
const { createControl, controlWords } = require('./control');
const { startWorkers, openGateWhenReady, stopAndCollect } = require('./workers');
const { checkControlCounter } = require('./check');
const { min, max } = require('./stats');

async function measureContended({ impl, workers, steps, durationMs, batch }) {
  const control = createControl();
  const ctl = controlWords(control);
  const lockShared = implementation(impl).create();
  const group = startWorkers(
    'sync_hammer',
    Array.from({ length: workers }, () => ({ impl, lockShared, control, steps, batch })),
    { timeLimitMs: durationMs + 30_000 },
  );
  await openGateWhenReady(ctl, workers, group);
  await new Promise((resolve) => setTimeout(resolve, durationMs));
  const results = await stopAndCollect(ctl, group);

  const ops = results.map((r) => r.ops);
  const totalOps = ops.reduce((a, b) => a + b, 0);
  checkControlCounter(ctl, totalOps);
  const first = results.reduce((a, r) => (r.start < a ? r.start : a), results[0].start);
  const last = results.reduce((a, r) => (r.end > a ? r.end : a), results[0].end);
  const seconds = Number(last - first) / 1e9;
  return {
    metrics: {
      opsPerSec: totalOps / seconds,
      // 1 = perfectly even; near 0 = one worker had the lock almost all the time.
      fairness: min(ops) / max(ops),
    },
  };
}

module.exports = { measureContended };
