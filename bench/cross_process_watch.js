'use strict';
// What it costs a process that its relay watches many region words (addon/across_processes/cross_process.h: a
// relay thread per 127 words). A holder process keeps up to 1,024 words locked for the whole run;
// the processes measured queue waits that never end on some of them, so that they watch N words
// in all, for each N of --words (default 1, 128 and 1,000). Measured in the same run, the
// repetitions interleaved and their order rotated:
//
//   wake-up, burst     two processes hand control to each other through three region Mutexes
//                      (child/wake_up.js), each release made once the other side is asleep in
//                      lock(), so that it reaches it through its relay; each side watches N words
//                      (N - 1 held ones and the Mutex it waits for). The median time from just
//                      before unlock() to the other process's lock() returning, over the first
//                      --burst hand-offs of each side, from a cold start
//   wake-up, steady    the same after --warmup hand-offs of each side, over --hand-offs more:
//                      median and p99
//   idle               a process that only watches N held words for --idle-ms: the CPU time it
//                      uses per second (its relay threads', which look at the words' holders
//                      every 20 ms)
//
// Each row gives the median over repetitions with their range, and the ratio to the fewest
// words: the median (and range) of the ratios each repetition makes with the measurement of the
// fewest words next to it.
const fs = require('node:fs');
const { walkArgv, checkPositiveInteger } = require('./support/argv');
const { median, min, max, percentile } = require('./support/stats');
const { rotate } = require('./support/teams');
const { createContext } = require('./cross_process/context');
const { SLICE_BYTES } = require('./cross_process/layout');
const { forkChild, runGroup, goAll } = require('./cross_process/processes');
const { cleanUpOnExit, runFacts } = require('./cross_process/run');

const USAGE = `usage: node bench/cross_process_watch.js [options]
  --words LIST     how many words the processes measured watch, comma-separated (default 1,128,1000)
  --reps N         repetitions of every measurement (default 5)
  --burst N        wake-ups of each side in a burst, from a cold start (default 100)
  --warmup N       wake-ups of each side before the steady measurement (default 500)
  --hand-offs N    wake-ups of each side measured in the steady state (default 2000)
  --idle-ms N      how long an idle process watches (default 1000)
  --out FILE       also write the results as JSON to FILE`;

const DEFAULTS = { reps: 5, burst: 100, warmup: 500, 'hand-offs': 2000, 'idle-ms': 1000 };
// The held words fill the region's first slice.
const MOST_WORDS = SLICE_BYTES / 4;
const GROUP_SLACK_MS = 60_000;
const MS_PER_HAND_OFF = 5;
const HOLDER_START_MS = 30_000;

function parseOptions(argv) {
  const options = { words: [1, 128, 1000], out: undefined };
  walkArgv(argv, USAGE, (arg, value) => {
    if (arg === '--words') options.words = value().split(',').map(Number);
    else if (Object.hasOwn(DEFAULTS, arg.slice(2))) options[arg.slice(2)] = Number(value());
    else if (arg === '--out') options.out = value();
    else return false;
    return true;
  });
  for (const [key, fallback] of Object.entries(DEFAULTS)) {
    options[key] ??= fallback;
    checkPositiveInteger(`--${key}`, options[key]);
  }
  for (const words of options.words) {
    checkPositiveInteger('--words', words);
    if (words > MOST_WORDS) throw new Error(`--words: at most ${MOST_WORDS}`);
  }
  return options;
}

// The holder of the words the others watch, once it has locked them all.
function startHolder(ctx, count) {
  const holder = forkChild({ mode: 'holdwords', region: ctx.region, heldAt: 0, count });
  let timer;
  return new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error('the holder did not lock its words')), HOLDER_START_MS);
    holder.listen((message) => message && message.type === 'locked' && resolve(holder), reject);
    holder.closed.then(() => reject(new Error(`the holder ended: ${holder.stderr()}`)));
  }).finally(() => clearTimeout(timer));
}

// The two sides of a hand-off measurement in a fresh slice, each watching `words` words; their
// reports.
function runSides(ctx, spec, words, limitMs) {
  const slice = ctx.newSlice();
  const sides = ['a', 'b'].map((role) =>
    forkChild({ ...spec, impl: 'parklock', role, region: ctx.region, slice, heldAt: 0, watched: words - 1 }));
  return runGroup(sides, { timeLimitMs: GROUP_SLACK_MS + limitMs, begin: goAll });
}

// Both sides' wake-up times in µs, after `warmup` of each.
async function wakeUp(ctx, words, warmup, handOffs) {
  const reports = await runSides(ctx, { mode: 'wakeup', warmup, handOffs }, words, (warmup + handOffs) * 2 * MS_PER_HAND_OFF);
  const us = reports.flatMap((report) => report.samples).map((ns) => ns / 1e3);
  if (us.length !== 2 * handOffs) throw new Error(`${us.length} wake-ups reported, ${2 * handOffs} expected`);
  return { medianUs: median(us), p99Us: percentile(us, 99) };
}

async function idle(ctx, words, ms) {
  const watcher = forkChild({ mode: 'idlewatch', region: ctx.region, heldAt: 0, watched: words, ms });
  const [report] = await runGroup([watcher], { timeLimitMs: GROUP_SLACK_MS + ms, begin: goAll });
  return { cpuMsPerSec: report.cpuMsPerSec };
}

const MEASURES = {
  burst: { label: 'wake-up, burst', metrics: ['medianUs'], run: (ctx, n, o) => wakeUp(ctx, n, 0, o.burst) },
  steady: {
    label: 'wake-up, steady',
    metrics: ['medianUs', 'p99Us'],
    run: (ctx, n, o) => wakeUp(ctx, n, o.warmup, o['hand-offs']),
  },
  idle: { label: 'idle', metrics: ['cpuMsPerSec'], run: (ctx, n, o) => idle(ctx, n, o['idle-ms']) },
};
const METRICS = { medianUs: 'median µs', p99Us: 'p99 µs', cpuMsPerSec: 'CPU ms per s' };

function buildCases(options) {
  return Object.keys(MEASURES).flatMap((measure) =>
    options.words.map((words) => ({ measure, words, outcomes: [] })));
}

async function runAll(ctx, cases, options) {
  for (let rep = 0; rep < options.reps; rep++) {
    process.stderr.write(`rep ${rep + 1}/${options.reps}: `);
    for (const c of rotate(cases, rep)) {
      try {
        c.outcomes[rep] = { status: 'ok', ...(await MEASURES[c.measure].run(ctx, c.words, options)) };
        process.stderr.write('.');
      } catch (error) {
        c.outcomes[rep] = { status: 'failed', reason: error.message };
        process.stderr.write('F');
      }
    }
    process.stderr.write('\n');
  }
}

const spread = (values) => ({ median: median(values), min: min(values), max: max(values) });

// Each case's spread per metric, and its ratios to the case of the same measure with the fewest
// words, repetition by repetition.
function summarize(cases) {
  return cases.map((c) => {
    const base = cases.filter((b) => b.measure === c.measure).reduce((a, b) => (b.words < a.words ? b : a));
    const summary = { measure: c.measure, words: c.words, baseWords: base.words, failures: [] };
    c.outcomes.forEach((o) => o.status === 'failed' && summary.failures.push(o.reason));
    for (const metric of MEASURES[c.measure].metrics) {
      const ok = c.outcomes.map((o) => (o.status === 'ok' ? o[metric] : undefined));
      const ratios = ok
        .map((value, rep) => {
          const b = base.outcomes[rep];
          return value !== undefined && b.status === 'ok' ? value / b[metric] : undefined;
        })
        .filter((r) => r !== undefined);
      summary[metric] = { ...spread(ok.filter((v) => v !== undefined)), ratio: spread(ratios), perRep: ok };
    }
    return summary;
  });
}

function formatReport(meta, rows) {
  const number = (v) => (v === undefined ? '-' : v >= 100 ? v.toFixed(0) : v.toFixed(v >= 10 ? 1 : 2));
  const cell = ({ median: m, min: lo, max: hi }) => `${number(m)} (${number(lo)}–${number(hi)})`;
  const lines = [
    `node bench/cross_process_watch.js ${meta.argv.join(' ')}`.trim(),
    `${meta.date}, Node ${meta.node}, ${meta.cpus} CPUs (${meta.cpuModel}), load ${meta.loadavgAtStart.map((l) => l.toFixed(2)).join(' ')}` +
      ` at the start, ${meta.loadavgAtEnd.map((l) => l.toFixed(2)).join(' ')} at the end, ${meta.durationSec.toFixed(0)} s`,
    '',
    '| measure | words watched | median (min–max) | ratio to the fewest words, median (min–max) |',
    '|---|---:|---:|---:|',
  ];
  for (const row of rows) {
    for (const metric of MEASURES[row.measure].metrics) {
      const label = `${MEASURES[row.measure].label}, ${METRICS[metric]}`;
      const s = row[metric];
      const ratio = row.words === row.baseWords ? '1' : cell(s.ratio);
      lines.push(`| ${label} | ${row.words} | ${cell(s)} | ${ratio} |`);
    }
    for (const failure of row.failures) lines.push(`FAILED (${row.measure}, ${row.words} words): ${failure}`);
  }
  return lines.join('\n');
}

async function main() {
  const argv = process.argv.slice(2);
  const options = parseOptions(argv);
  const facts = runFacts(options);
  const ctx = createContext(options);
  cleanUpOnExit(ctx);
  const cases = buildCases(options);
  const handOffs = cases.filter((c) => c.measure !== 'idle').length;
  ctx.createRegion(1 + handOffs * options.reps);
  ctx.newSlice(); // the held words
  const holder = await startHolder(ctx, Math.max(...options.words));
  await runAll(ctx, cases, options);
  holder.kill();
  const rows = summarize(cases);
  const meta = { argv, ...facts.finish() };
  console.log(formatReport(meta, rows));
  if (options.out) fs.writeFileSync(options.out, `${JSON.stringify({ meta, rows }, null, 2)}\n`);
  if (rows.some((r) => r.failures.length > 0)) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error.message);
  process.exitCode = 1;
});
