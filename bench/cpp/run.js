'use strict';
// Builds the Google Benchmark programs of the C++ core (build/bench, -DPARKLOCK_BENCHMARKS=ON)
// and runs them with JSON output; returns the median of each benchmark and pairs them:
//   mutex_bench       parklock::Mutex vs std::mutex            (ratio: parklock / std)
//   condition_bench   notify_all with requeue vs notify_one xN (ratio: requeue / notify-one)
// Usable alone (`node bench/cpp/run.js [--quick] [--reps N] [--filter REGEX]`) or from bench/run.js, which folds the result
// into its table and JSON.
const path = require('node:path');
const { execFile } = require('node:child_process');
const { promisify } = require('node:util');

const run = promisify(execFile);
const ROOT = path.join(__dirname, '..', '..');
const BUILD_DIR = path.join(ROOT, 'build', 'bench');

const PROGRAMS = [
  { target: 'parklock_bench', subject: 'parklock::Mutex', reference: 'std::mutex' },
  { target: 'parklock_condition_bench', subject: 'RequeueAll', reference: 'NotifyOneEach' },
];

async function build(log) {
  log('cpp: configuring and building build/bench (PARKLOCK_BENCHMARKS=ON)...');
  await run('cmake', ['-S', ROOT, '-B', BUILD_DIR, '-DPARKLOCK_BENCHMARKS=ON', '-DCMAKE_BUILD_TYPE=Release'],
    { maxBuffer: 1 << 24 });
  await run('cmake', ['--build', BUILD_DIR, '-j2', '--target', ...PROGRAMS.map((p) => p.target)],
    { maxBuffer: 1 << 24 });
}

const NS_PER = { ns: 1, us: 1e3, ms: 1e6, s: 1e9 };

const median = (values) => {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

// Fields of a Google Benchmark result that are not user counters.
const NOT_COUNTERS = new Set(['name', 'family_index', 'per_family_instance_index', 'run_name',
  'run_type', 'repetitions', 'repetition_index', 'threads', 'iterations', 'real_time', 'cpu_time',
  'time_unit', 'items_per_second', 'bytes_per_second', 'error_occurred', 'error_message',
  'aggregate_name', 'aggregate_unit', 'label', 'skipped']);

// Google Benchmark JSON -> [{ name, timeNs, minNs, maxNs, itemsPerSec, counters, error }]: the
// median of the repetitions, their spread, and the median of each user counter (woken, futile...).
function parse(json) {
  if (json.trim() === '') return [];  // --benchmark_filter matched nothing in this program
  // The coefficient of variation of a counter that is always 0 is written as a bare NaN.
  const { benchmarks } = JSON.parse(json.replace(/:\s*-?NaN\b/g, ': null'));
  const byName = new Map();
  for (const b of benchmarks) {
    if (b.run_type === 'aggregate') continue;
    const name = b.run_name || b.name;
    if (!byName.has(name)) byName.set(name, []);
    byName.get(name).push(b);
  }
  return [...byName].map(([name, runs]) => {
    const times = runs.map((b) => b.real_time * NS_PER[b.time_unit || 'ns']);
    const counterNames = Object.keys(runs[0]).filter((k) => !NOT_COUNTERS.has(k) &&
      typeof runs[0][k] === 'number');
    const failed = runs.find((b) => b.error_occurred);
    return {
      name,
      timeNs: median(times),
      minNs: Math.min(...times),
      maxNs: Math.max(...times),
      itemsPerSec: runs[0].items_per_second === undefined ? undefined
        : median(runs.map((b) => b.items_per_second)),
      counters: Object.fromEntries(counterNames.map((k) => [k, median(runs.map((b) => b[k]))])),
      error: failed ? failed.error_message : undefined,
    };
  });
}

// "BM_Contended<std::mutex>/real_time/threads:2" -> { key: "BM_Contended/real_time/threads:2",
// type: "std::mutex" }
function splitName(name) {
  const match = /^([^<]*)<([^>]*)>(.*)$/.exec(name);
  return match ? { key: match[1] + match[3], type: match[2] } : { key: name, type: '' };
}

function pairUp(results, { subject, reference }) {
  const byKey = new Map();
  for (const result of results) {
    const { key, type } = splitName(result.name);
    if (!byKey.has(key)) byKey.set(key, {});
    byKey.get(key)[type] = result;
  }
  const pairs = [];
  for (const [key, types] of byKey) {
    const a = types[subject];
    const b = types[reference];
    if (!a || !b) continue;
    pairs.push({
      benchmark: key,
      subject,
      reference,
      subjectNs: a.timeNs,
      referenceNs: b.timeNs,
      subjectRangeNs: [a.minNs, a.maxNs],
      referenceRangeNs: [b.minNs, b.maxNs],
      subjectCounters: a.counters,
      referenceCounters: b.counters,
      // Time ratio: below 1 means the subject is faster.
      timeRatio: a.timeNs / b.timeNs,
      // Throughput ratio: above 1 means the subject does more per second.
      throughputRatio: a.itemsPerSec && b.itemsPerSec ? a.itemsPerSec / b.itemsPerSec : undefined,
      error: a.error || b.error,
      others: Object.fromEntries(Object.entries(types)
        .filter(([type]) => type !== subject && type !== reference)
        .map(([type, r]) => [type, r.timeNs])),
    });
  }
  return pairs;
}

// build: false runs the programs already in build/bench, on a machine that has no Google
// Benchmark to build them with (they were built elsewhere and copied there).
async function runCpp({ quick = false, repetitions = quick ? 2 : 5, filter, build: rebuild = true,
  log = console.log } = {}) {
  try {
    if (rebuild) await build(log);
  } catch (error) {
    return { status: 'skipped', reason: `build failed: ${(error.stderr || error.message).trim().slice(-800)}` };
  }
  const programs = [];
  for (const program of PROGRAMS) {
    // Repetitions interleaved in random order, so that a slow stretch of a shared machine falls
    // on the subject and its reference alike instead of on one of them.
    const args = [
      '--benchmark_format=json',
      `--benchmark_min_time=${quick ? 0.05 : 0.3}`,
      `--benchmark_repetitions=${repetitions}`,
      '--benchmark_enable_random_interleaving=true',
    ];
    if (filter) args.push(`--benchmark_filter=${filter}`);
    log(`cpp: running ${program.target} ${args.slice(1).join(' ')}`);
    try {
      const { stdout } = await run(path.join(BUILD_DIR, program.target), args,
        { maxBuffer: 1 << 24, timeout: 300_000 });
      const results = parse(stdout);
      programs.push({ ...program, results, pairs: pairUp(results, program) });
    } catch (error) {
      programs.push({ ...program, error: (error.stderr || error.message).trim().slice(-800) });
    }
  }
  return { status: 'ok', repetitions, programs };
}

if (require.main === module) {
  const quick = process.argv.includes('--quick');
  const valueOf = (flag) => {
    const at = process.argv.indexOf(flag);
    return at < 0 ? undefined : process.argv[at + 1];
  };
  const reps = valueOf('--reps');
  runCpp({ quick, repetitions: reps && Number(reps), filter: valueOf('--filter') }).then((result) => {
    const { formatCpp } = require('../support/table');
    console.log(formatCpp(result));
  });
}

module.exports = { runCpp };
