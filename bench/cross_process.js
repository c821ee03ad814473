'use strict';
// Locking across processes: parklock's Mutex placed in a sharedMemory() region, against flock(2)
// and proper-lockfile, with every contender a process of its own. Three measurements:
//
//   throughput   N processes (default 4) increment one counter under the lock for a fixed
//                window. The counter is read and written non-atomically, so it ends equal to the
//                sum of the acquisitions the processes report only if the lock excluded: a
//                mismatch makes the repetition a failure, not a number.
//   hand-off     2 processes pass control back and forth through locks alone: the time per
//                hand-off, median and p99.
//   owner death  a holder is SIGKILLed: the time until the next acquirer gets
//                ERR_PARKLOCK_OWNER_DIED.
//
// Node has no flock(2) binding: the flock rows use fs-ext's flockSync(), or, where fs-ext cannot
// be built, a small C program compiled at run time (it then measures flock without any Node in
// the loop). fs-ext and proper-lockfile are installed into temp directories outside the
// repository when they are not resolvable; neither becomes a dependency of parklock.
//
// The parts, in cross_process/: baselines.js finds the baselines' code; cases.js lists the cases
// and runs their repetitions; measure.js starts and reads the processes of each measurement
// (processes.js, child/*.js, flock_helper.c) in a slice of one region (context.js, layout.js);
// summary.js and report.js make the results; run.js cleans up on the way out and records the
// run's facts.
const fs = require('node:fs');
const { walkArgv, checkPositiveInteger } = require('./support/argv');
const { createContext } = require('./cross_process/context');
const { findFlock, findProperLockfile } = require('./cross_process/baselines');
const { buildCases, runAll } = require('./cross_process/cases');
const { cleanUpOnExit, runFacts } = require('./cross_process/run');
const { summarize, computeRatios } = require('./cross_process/summary');
const { formatReport } = require('./cross_process/report');

const USAGE = `usage: node bench/cross_process.js [options]
  --quick          short windows, 1 repetition (ms 200, rounds 2000, kills 3)
  --reps N         repetitions of every measurement (default 3; --quick: 1)
  --ms N           throughput window per repetition in ms (default 1000; --quick: 200)
  --procs N        processes contending in the throughput measurement (default 4)
  --rounds N       hand-off round trips measured per repetition (default 20000; --quick: 2000)
  --kills N        holders killed per owner-death case and repetition (default 10; --quick: 3)
  --flock KIND     auto (default: fs-ext, else the C helper), fs-ext, or c
  --out FILE       also write the results as JSON to FILE`;

const DEFAULTS = { reps: 3, ms: 1000, procs: 4, rounds: 20000, kills: 10 };
const QUICK_DEFAULTS = { reps: 1, ms: 200, procs: 4, rounds: 2000, kills: 3 };
const NUMBER_OPTIONS = Object.keys(DEFAULTS).map((key) => `--${key}`);
const FLOCK_KINDS = ['auto', 'fs-ext', 'c'];

function parseOptions(argv) {
  const options = { quick: false, flock: 'auto', out: undefined };
  const numbers = {};
  walkArgv(argv, USAGE, (arg, value) => {
    if (arg === '--quick') options.quick = true;
    else if (NUMBER_OPTIONS.includes(arg)) numbers[arg.slice(2)] = Number(value());
    else if (arg === '--flock') options.flock = value();
    else if (arg === '--out') options.out = value();
    else return false;
    return true;
  });
  for (const [key, fallback] of Object.entries(options.quick ? QUICK_DEFAULTS : DEFAULTS)) {
    options[key] = numbers[key] ?? fallback;
    checkPositiveInteger(`--${key}`, options[key]);
  }
  if (options.procs < 2) throw new Error('--procs must be at least 2: one process contends with nobody');
  if (!FLOCK_KINDS.includes(options.flock)) throw new Error(`--flock takes auto, fs-ext or c\n${USAGE}`);
  // Warm-up round trips, not measured: the first ones include JIT compilation and page faults.
  options.warmup = Math.max(100, Math.round(options.rounds / 10));
  return options;
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  const facts = runFacts(options);
  const ctx = createContext(options);
  cleanUpOnExit(ctx);
  ctx.flock = findFlock(options.flock, ctx.dir);
  ctx.properLockfile = findProperLockfile();
  const cases = buildCases(ctx);
  ctx.createRegion(cases.length * options.reps);
  await runAll(cases, options.reps);
  const rows = cases.map(summarize);
  const ratios = computeRatios(rows);
  const meta = {
    ...facts.finish(),
    flock: ctx.flock.reason ? `skipped: ${ctx.flock.reason}` : ctx.flock.description,
    properLockfile: ctx.properLockfile.reason
      ? `skipped: ${ctx.properLockfile.reason}`
      : `${ctx.properLockfile.label} from ${ctx.properLockfile.where}`,
  };
  console.log(formatReport(meta, rows, ratios));
  if (options.out) {
    fs.writeFileSync(options.out, `${JSON.stringify({ meta, rows, ratios }, null, 2)}\n`);
    console.log(`\nwrote ${options.out}`);
  }
  if (rows.some((r) => r.failures.length > 0)) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error.message);
  process.exitCode = 1;
});
