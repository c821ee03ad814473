'use strict';
// Named locks (`locks` and `new LockManager(path)`) against what they replace, every comparison
// measured in the same run, its repetitions interleaved and their order rotated:
//
//   workers      4 worker threads await exclusive request()s of one name in a loop, a plain
//                (non-atomic) counter incremented in the callback and checked exactly at the
//                end: parklock's `locks` against Node's own worker_threads.locks (Node >= 24.5;
//                run this script with such a Node for that row). Burst: the rate of the first
//                --burst requests of every worker from a cold start; steady: the rate in a
//                --steady-ms window after --warmup-ms.
//   uncontended  one fresh thread: request() + release against Mutex#executeLocked(), and the
//                blocking locks.lock() + unlock() against Mutex#lock() + unlock(); time per
//                acquire-and-release over the first calls (burst) and after a warm-up (steady).
//   processes    4 processes on one name of a LockManager(path), each looping acquisitions with
//                an exact counter (bench/cross_process's throughput measurement), against
//                flock(2) from a C program with no Node in its loop and against proper-lockfile
//                (retries enabled, else a contended lock() fails at once): acquisitions per
//                second over a short window from a cold start (burst) and a long one (steady).
//   memory       100,000 distinct names requested and released one after another in a process of
//                its own: the RSS growth across them after a full GC.
const fs = require('node:fs');
const { walkArgv, checkPositiveInteger } = require('./support/argv');
const { createContext } = require('./cross_process/context');
const { findFlock, findProperLockfile } = require('./cross_process/baselines');
const { runAll } = require('./cross_process/cases');
const { cleanUpOnExit, runFacts } = require('./cross_process/run');
const { buildCases } = require('./named_locks/cases');
const { summarize, computeRatios, evaluateTargets, formatRows, formatTargets } = require('./named_locks/summary');

const USAGE = `usage: node bench/named_locks.js [options]
  --reps N                 repetitions of every case (default 5)
  --burst N                requests of each worker in the contended burst (default 200)
  --warmup-ms N            contended requests before the steady window (default 300)
  --steady-ms N            the contended steady window (default 1000)
  --uncontended-burst N    uncontended calls timed from a cold start (default 1000)
  --uncontended-warmup N   uncontended calls before the steady ones (default 20000)
  --uncontended-steady N   uncontended calls timed in the steady state (default 100000)
  --process-burst-ms N     the cross-process window from a cold start (default 150)
  --process-steady-ms N    the cross-process long window (default 1500)
  --names N                distinct names of the memory case (default 100000)
  --out FILE               also write the results as JSON to FILE`;

const DEFAULTS = {
  reps: 5,
  burst: 200,
  warmupMs: 300,
  steadyMs: 1000,
  uncontendedBurst: 1000,
  uncontendedWarmup: 20000,
  uncontendedSteady: 100000,
  processBurstMs: 150,
  processSteadyMs: 1500,
  names: 100000,
};
const optionOf = (key) => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

function parseOptions(argv) {
  const options = { ...DEFAULTS, out: undefined };
  const keys = Object.fromEntries(Object.keys(DEFAULTS).map((key) => [optionOf(key), key]));
  walkArgv(argv, USAGE, (arg, value) => {
    if (keys[arg]) options[keys[arg]] = Number(value());
    else if (arg === '--out') options.out = value();
    else return false;
    return true;
  });
  for (const key of Object.keys(DEFAULTS)) checkPositiveInteger(optionOf(key), options[key]);
  return options;
}

async function main() {
  const argv = process.argv.slice(2);
  const options = parseOptions(argv);
  const facts = runFacts(options);
  const ctx = createContext({});
  cleanUpOnExit(ctx);
  ctx.flock = findFlock('c', ctx.dir);
  ctx.properLockfile = findProperLockfile();
  const cases = buildCases(ctx, options);
  // Two throughput measurements (burst, steady) per cross-process case and repetition.
  ctx.createRegion(2 * options.reps * cases.filter((c) => c.scenario === 'processes').length);
  await runAll(cases, options.reps);
  const rows = cases.map(summarize);
  const ratios = computeRatios(rows);
  const targets = evaluateTargets(rows, ratios);
  const meta = {
    command: `node bench/named_locks.js ${argv.join(' ')}`.trim(),
    ...facts.finish(),
    flock: ctx.flock.reason ? `skipped: ${ctx.flock.reason}` : ctx.flock.description,
    properLockfile: ctx.properLockfile.reason ? `skipped: ${ctx.properLockfile.reason}` : ctx.properLockfile.label,
  };
  console.log(`${meta.command}\n${meta.date}, Node ${meta.node}, ${meta.cpus} CPUs (${meta.cpuModel}), ` +
    `${meta.durationSec.toFixed(0)} s\n\n${formatRows(rows, ratios)}\n\n${formatTargets(targets)}`);
  if (options.out) {
    fs.writeFileSync(options.out, `${JSON.stringify({ meta, rows, ratios, targets }, null, 2)}\n`);
    console.log(`\nwrote ${options.out}`);
  }
  if (rows.some((r) => r.failures.length > 0)) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error.stack);
  process.exitCode = 1;
});
