'use strict';
// Shared by the two contended-sync scenarios: N workers hammer one lock for a fixed time; the
// result is the total throughput, plus how evenly the workers shared the lock.
const { implementation } = require('./implementations');
const { createControl, controlWords } = require('./control');
const { startWorkers, openGateWhenReady, stopAndCollect } = require('./workers');
const { checkControlCounter } = require('./check');
const { min, max } = require('./stats');

async function measureContended({ impl, workers, steps, durationMs, batch, permits }) {
  const control = createControl();
  const ctl = controlWords(control);
  const lockShared = implementation(impl).create(permits === undefined ? undefined : { permits });
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
  const admits = lockShared && lockShared.permits !== undefined ? lockShared.permits
    : implementation(impl).admits;
  // Readers write nothing (see workers/sync_hammer.js): the counter stays 0.
  checkControlCounter(ctl, admits === 'all' ? 0 : totalOps);
  const overfull = results.reduce((a, r) => a + r.overfull, 0);
  if (overfull > 0) throw new Error(`${overfull} entries found ${admits} threads inside already`);
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

// The metrics measureContended() reports, for the scenarios built on it.
const CONTENDED_METRICS = [
  { key: 'opsPerSec', label: 'ops/s', better: 'higher', digits: 0 },
  { key: 'fairness', label: 'min/max share', better: 'higher', digits: 2 },
];

module.exports = { measureContended, CONTENDED_METRICS };
