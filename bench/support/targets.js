'use strict';
// The performance targets, evaluated on the medians of this run. Each gives PASS or MISS with
// the measured ratio, or N/A when what it needs was not measured (scenario not selected, every
// run failed, C++ not built).
const { formatNumber } = require('./table');

function findRow(results, scenario, impl, param = null) {
  const s = results.scenarios[scenario];
  return s && s.rows.find((r) => r.impl === impl && r.param === param);
}

function medianOf(results, scenario, impl, param, metric) {
  const row = findRow(results, scenario, impl, param);
  return row && row.ok > 0 ? row.median[metric] : undefined;
}

const na = (why) => ({ status: 'N/A', measured: why });
const verdict = (pass, measured) => ({ status: pass ? 'PASS' : 'MISS', measured });

// parklock's median against a baseline's, for one metric; `holds(ratio)` is the target.
function ratioTarget(results, scenario, baseline, param, metric, unit, holds) {
  const mine = medianOf(results, scenario, 'parklock', param, metric);
  const theirs = medianOf(results, scenario, baseline, param, metric);
  if (mine === undefined || theirs === undefined) return na(`not measured (${scenario})`);
  const ratio = mine / theirs;
  return verdict(holds(ratio), `${ratio.toFixed(2)}x (parklock ${formatNumber(mine, 1)} vs ` +
    `${formatNumber(theirs, 1)} ${unit})`);
}

function allAsyncCompletes(results) {
  const s = results.scenarios.all_async;
  if (!s) return na('not measured (all_async)');
  const tally = (impl) => s.rows.filter((r) => r.impl === impl)
    .reduce((t, r) => ({ ok: t.ok + r.ok, runs: t.runs + r.runs }), { ok: 0, runs: 0 });
  const mine = tally('parklock');
  const blog = tally('v8-blog');
  return verdict(mine.runs > 0 && mine.ok === mine.runs,
    `parklock ${mine.ok}/${mine.runs} runs completed (V8-blog lock: ${blog.ok}/${blog.runs})`);
}

function mixedMaxWait(results) {
  const row = findRow(results, 'mixed', 'parklock');
  if (!row || row.ok === 0) return na('not measured (mixed)');
  const typical = row.median.maxMs;
  // The control row (an event-loop turn with no lock, same busy workers) is the machine's own
  // floor for this number: with fewer free cores than busy threads it is the OS scheduler's.
  const floor = medianOf(results, 'mixed', 'control', null, 'maxMs');
  return verdict(typical <= 2, `${typical.toFixed(2)} ms median of per-run max ` +
    `(worst run ${row.max.maxMs.toFixed(2)} ms, p99 ${formatNumber(row.median.p99Us, 0)} µs` +
    `${floor === undefined ? '' : `; no-lock control: ${floor.toFixed(2)} ms`})`);
}

function cppPair(results, target, benchmark, pick, holds) {
  const cpp = results.cpp;
  if (!cpp || cpp.status !== 'ok') return na(cpp ? `C++ ${cpp.status}` : 'C++ not run');
  const program = cpp.programs.find((p) => p.target === target);
  const pair = program && program.pairs && program.pairs.find((p) => p.benchmark === benchmark);
  if (!pair || pair.error) return na(`${benchmark} ${pair ? pair.error : 'missing'}`);
  const ratio = pair[pick];
  return verdict(holds(ratio), `${ratio.toFixed(2)}x ${pick === 'timeRatio' ? 'time' : 'throughput'} ` +
    `(parklock ${formatNumber(pair.subjectNs, 1)} ns vs std ${formatNumber(pair.referenceNs, 1)} ns per op)`);
}

function rssGrowth(results) {
  const mb = medianOf(results, 'memory', 'parklock', 'rss-1M', 'rssGrowthMB');
  if (mb === undefined) return na('not measured (memory)');
  return verdict(mb < 5, `${mb.toFixed(2)} MB`);
}

// Tracing with nobody subscribed against tracing stubbed out, for one diagnostics_cost workload
// (time per op, both measured in the same process). Every repetition gives a ratio of its own:
// when their range crosses the limit, the verdict of the median is not the verdict of every run.
function noSubscriberCost(results, workload, limit) {
  const row = findRow(results, 'diagnostics_cost', workload);
  if (!row || row.ok === 0) return na('not measured (diagnostics_cost)');
  const ratio = row.median.noSubRatio;
  const lo = row.min.noSubRatio;
  const hi = row.max.noSubRatio;
  const straddles = lo <= limit && hi > limit ? ', straddles the limit' : '';
  return verdict(ratio <= limit, `${ratio.toFixed(3)}x (runs ${lo.toFixed(3)}..${hi.toFixed(3)}` +
    `${straddles}; A/A ${row.median.aaRatio.toFixed(3)}; ${formatNumber(row.median.waits, 0)} ` +
    'traced waits per run when subscribed)');
}

const TARGETS = [
  ['uncontended sync <= 1.1x pure-JS three-state (ns/op)',
    (r) => ratioTarget(r, 'uncontended_sync', 'drepper', null, 'nsPerOp', 'ns/op', (x) => x <= 1.1)],
  ['uncontended async <= 1.0x pure-JS waitAsync lock (ns/op)',
    (r) => ratioTarget(r, 'uncontended_async', 'v8-blog', null, 'nsPerOp', 'ns/op', (x) => x <= 1.0)],
  ['contended sync, 2 workers, tiny CS >= 1.5x pure-JS three-state',
    (r) => ratioTarget(r, 'contended_tiny', 'drepper', 2, 'opsPerSec', 'ops/s', (x) => x >= 1.5)],
  ['contended sync, 2 workers, tiny CS >= 2x Atomics.Mutex',
    (r) => ratioTarget(r, 'contended_tiny', 'v8-atomics', 2, 'opsPerSec', 'ops/s', (x) => x >= 2)],
  ['all-async contention completes every run', allAsyncCompletes],
  ['mixed: main-thread max wait <= 2 ms', mixedMaxWait],
  ['mixed: total throughput >= pure-JS three-state (main sync)',
    (r) => ratioTarget(r, 'mixed', 'drepper', null, 'totalOpsPerSec', 'ops/s', (x) => x >= 1.0)],
  ['C++ core uncontended within 1.2x std::mutex',
    (r) => cppPair(r, 'parklock_bench', 'BM_Uncontended', 'timeRatio', (x) => x <= 1.2)],
  ['C++ core contended 2 threads >= 1.0x std::mutex',
    (r) => cppPair(r, 'parklock_bench', 'BM_Contended/real_time/threads:2', 'throughputRatio', (x) => x >= 1.0)],
  ['RSS growth after 1M async cycles < 5 MB', rssGrowth],
  ['no subscriber <= 1.02x tracing bypassed: blocking waits (futex)',
    (r) => noSubscriberCost(r, 'blocking-wait', 1.02)],
  ['no subscriber <= 1.02x tracing bypassed: contended Mutex, 2 workers',
    (r) => noSubscriberCost(r, 'sync-contended', 1.02)],
  ['no subscriber <= 1.02x tracing bypassed: Promise waits (lockAsync)',
    (r) => noSubscriberCost(r, 'async-handoff', 1.02)],
];

function evaluateTargets(results) {
  return TARGETS.map(([target, evaluate]) => ({ target, ...evaluate(results) }));
}

module.exports = { evaluateTargets };
