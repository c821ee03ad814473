'use strict';
// The cases of bench/named_locks.js, one per row of its report. Each case's run() is one
// repetition and resolves with its metrics (or throws why there are none); the repetitions of
// every case interleave (bench/cross_process/cases.js runAll), so the rows compared ran side by
// side in time.
const path = require('node:path');
const { execFile } = require('node:child_process');
const { startWorkers, openGateWhenReady, stopAndCollect } = require('../support/workers');
const { CONTROL, createControl, controlWords } = require('../support/control');
const { max } = require('../support/stats');
const { measureThroughput } = require('../cross_process/measure');

const WORKERS = 4;
const CASE_SLACK_MS = 120_000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Node's own Web Locks in worker_threads (Node 24.5 and later): the baseline of the contended
// request() case, and a reference for the memory case.
const nodeLocksSkip = require('node:worker_threads').locks === undefined
  ? `worker_threads.locks needs Node >= 24.5 (this is ${process.version})`
  : undefined;

// WORKERS threads awaiting exclusive request()s of one name: the burst's rate (WORKERS x burst
// requests from the opening of the gate to the last one's end), then the rate in a steady window
// that opens after the warm-up.
async function contendedRequests(impl, o) {
  const control = createControl();
  const ctl = controlWords(control);
  const name = `counter-${impl}`;
  const group = startWorkers('named_request', Array.from({ length: WORKERS }, () => ({ impl, control, burst: o.burst, name })),
    { timeLimitMs: CASE_SLACK_MS + o.warmupMs + o.steadyMs });
  const opened = Number(await openGateWhenReady(ctl, WORKERS, group));
  await sleep(o.warmupMs);
  Atomics.store(ctl, CONTROL.MEASURE, 1);
  const windowStart = process.hrtime.bigint();
  await sleep(o.steadyMs);
  Atomics.store(ctl, CONTROL.MEASURE, 0);
  const windowNs = Number(process.hrtime.bigint() - windowStart);
  const reports = await stopAndCollect(ctl, group);
  const sum = (key) => reports.reduce((total, r) => total + r[key], 0);
  // Both signs of two holders at once: callbacks that found another inside, and increments lost
  // to them. They fail parklock's repetition; Node's own locks are the baseline, whose rates are
  // kept with its overlaps and lost increments counted beside them.
  const overlaps = sum('overlaps');
  const lost = (sum('ops') - ctl[CONTROL.COUNTER]) | 0;
  if (impl === 'parklock' && (overlaps > 0 || lost !== 0)) {
    throw new Error(`${overlaps} callbacks ran while another held the name; ${lost} of ${sum('ops')} increments lost`);
  }
  return {
    burstOpsPerSec: (WORKERS * o.burst) / ((max(reports.map((r) => r.burstEnd)) - opened) / 1e9),
    steadyOpsPerSec: sum('steadyOps') / (windowNs / 1e9),
    overlaps,
    lostIncrements: lost,
  };
}

// One fresh thread timing one uncontended acquire-and-release.
async function uncontended(op, o) {
  const group = startWorkers('named_uncontended', [{ op, burst: o.uncontendedBurst, warmup: o.uncontendedWarmup, steady: o.uncontendedSteady }],
    { timeLimitMs: CASE_SLACK_MS });
  await group.finished;
  if (group.problems.length > 0) throw new Error(group.problems.join('; '));
  const [report] = group.results;
  return { burstNsPerOp: report.burstNsPerOp, steadyNsPerOp: report.steadyNsPerOp };
}

// bench/cross_process's throughput measurement (4 fresh processes, an exact counter), over a short
// window from a cold start and then, with fresh processes again, over a long one.
async function processes(impl, ctx, o) {
  const windowOf = (ms) => ({ ...ctx, options: { ...ctx.options, procs: WORKERS, ms } });
  const burst = await measureThroughput(impl, windowOf(o.processBurstMs));
  const steady = await measureThroughput(impl, windowOf(o.processSteadyMs));
  return { burstOpsPerSec: burst.opsPerSec, steadyOpsPerSec: steady.opsPerSec };
}

// For parklock, the same loop on one Mutex's executeLocked() runs first in a process of its own:
// `rssAboveAnchorMB` is what the names cost beyond what the loop costs the runtime.
async function memory(impl, o) {
  const report = await memoryChild(impl, o);
  if (impl !== 'parklock') return report;
  const anchor = await memoryChild('mutex', o);
  return { ...report, anchorRssGrowthMB: anchor.rssGrowthMB, rssAboveAnchorMB: report.rssGrowthMB - anchor.rssGrowthMB };
}

function memoryChild(impl, o) {
  const child = path.join(__dirname, 'memory_child.js');
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--expose-gc', child, impl, String(o.names)], { timeout: CASE_SLACK_MS }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${error.message} ${stderr}`.trim()));
      else resolve(JSON.parse(stdout));
    });
  }).then((report) => {
    if (report.leftOver > 0) throw new Error(`query() still lists ${report.leftOver} requests after every release`);
    return report;
  });
}

// ctx: bench/cross_process/context.js's, with the flock and proper-lockfile baselines found.
function buildCases(ctx, o) {
  const flockSkip = ctx.flock.reason && `flock unavailable: ${ctx.flock.reason}`;
  const lockfileSkip = ctx.properLockfile.reason && `proper-lockfile unavailable: ${ctx.properLockfile.reason}`;
  const cases = [
    ['workers', 'parklock', 'parklock locks.request()', () => contendedRequests('parklock', o)],
    ['workers', 'node', 'worker_threads.locks.request()', () => contendedRequests('node', o), nodeLocksSkip],
    ['uncontended', 'request', 'locks.request(name, cb)', () => uncontended('request', o)],
    ['uncontended', 'executeLocked', 'Mutex#executeLocked(cb)', () => uncontended('executeLocked', o)],
    ['uncontended', 'lock', 'locks.lock(name).unlock()', () => uncontended('lock', o)],
    ['uncontended', 'mutex-lock', 'Mutex#lock() + unlock()', () => uncontended('mutex-lock', o)],
    ['processes', 'named-lock', 'LockManager(path).lock()', () => processes('named-lock', ctx, o)],
    ['processes', 'named-request', 'LockManager(path).request()', () => processes('named-request', ctx, o)],
    ['processes', 'flock', ctx.flock.label || 'flock(2)', () => processes('flock', ctx, o), flockSkip],
    ['processes', 'proper-lockfile', ctx.properLockfile.label || 'proper-lockfile', () => processes('proper-lockfile', ctx, o), lockfileSkip],
    ['memory', 'parklock', `locks.request(), ${o.names} names`, () => memory('parklock', o)],
    ['memory', 'node', `worker_threads.locks.request(), ${o.names} names`, () => memory('node', o), nodeLocksSkip],
  ];
  return cases.map(([scenario, key, label, run, skip]) => ({ scenario, key, label, run, skip, outcomes: [] }));
}

module.exports = { buildCases, WORKERS };
