'use strict';
// Builds the Google Benchmark programs of the C++ core (build/bench, -DPARKLOCK_BENCHMARKS=ON)
// and runs them with JSON output; returns the median of each benchmark and pairs them:
//   mutex_bench       parklock::Mutex vs std::mutex            (ratio: parklock / std)
//   condition_bench   notify_all with requeue vs notify_one xN (ratio: requeue / notify-one)
// Usable alone (`node bench/cpp/run.js [--quick]`) or from bench/run.js, which folds the result
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

// Google Benchmark JSON -> [{ name, timeNs, itemsPerSec, error }], medians when repeated.
function parse(json, repetitions) {
  const { benchmarks } = JSON.parse(json);
  return benchmarks
    .filter((b) => (repetitions > 1 ? b.run_type === 'aggregate' && b.aggregate_name === 'median'
      : b.run_type !== 'aggregate'))
    .map((b) => ({
      name: b.run_name || b.name.replace(/_median$/, ''),
      timeNs: b.real_time * NS_PER[b.time_unit || 'ns'],
      itemsPerSec: b.items_per_second,
      error: b.error_occurred ? b.error_message : undefined,
    }));
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

async function runCpp({ quick = false, repetitions = quick ? 2 : 5, log = console.log } = {}) {
  try {
    await build(log);
  } catch (error) {
    return { status: 'skipped', reason: `build failed: ${(error.stderr || error.message).trim().slice(-800)}` };
  }
  const programs = [];
  for (const program of PROGRAMS) {
    const args = [
      '--benchmark_format=json',
      `--benchmark_min_time=${quick ? 0.05 : 0.3}`,
      `--benchmark_repetitions=${repetitions}`,
    ];
    if (repetitions > 1) args.push('--benchmark_report_aggregates_only=true');
    log(`cpp: running ${program.target} ${args.slice(1).join(' ')}`);
    try {
      const { stdout } = await run(path.join(BUILD_DIR, program.target), args,
        { maxBuffer: 1 << 24, timeout: 300_000 });
      const results = parse(stdout, repetitions);
      programs.push({ ...program, results, pairs: pairUp(results, program) });
    } catch (error) {
      programs.push({ ...program, error: (error.stderr || error.message).trim().slice(-800) });
    }
  }
  return { status: 'ok', repetitions, programs };
}

if (require.main === module) {
  const quick = process.argv.includes('--quick');
  runCpp({ quick }).then((result) => {
    const { formatCpp } = require('../support/table');
    console.log(formatCpp(result));
  });
}

module.exports = { runCpp };
