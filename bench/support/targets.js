'use strict';
// The performance targets, evaluated on this run. Each gives PASS (the target holds at the median
// and in every repetition), MISS (in none), STRADDLES (the spread of the repetitions straddles
// it), or N/A when what it needs was not measured (scenario not selected, every run failed, C++
// not built); with the median ratio and the range across repetitions.
const { formatNumber } = require('./table');
const { LOCK_ASYNC, EXECUTE_LOCKED } = require('../scenarios/uncontended_async');

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

// PASS when the target holds in every repetition, MISS when in none, STRADDLES otherwise: one
// good or bad repetition on a noisy machine decides nothing.
function spreadVerdict(ratios, holds, measured) {
  const held = ratios.filter(holds).length;
  const status = held === ratios.length ? 'PASS' : held === 0 ? 'MISS' : 'STRADDLES';
  return { status, measured };
}

// The ratio of each repetition: repetitions are interleaved (rep i of every row ran in the same
// round), so they pair up by index when both rows completed every one; otherwise the extremes.
function ratiosOf(mine, theirs, metric) {
  const a = mine.values[metric];
  const b = theirs.values[metric];
  if (a.length === b.length && a.length === mine.runs && b.length === theirs.runs) {
    return a.map((v, i) => v / b[i]);
  }
  return [mine.min[metric] / theirs.max[metric], mine.max[metric] / theirs.min[metric]];
}

// parklock's row (or `subject`'s) against a baseline's, for one metric; `holds(ratio)` is the
// target. Reports the median ratio and the range of the per-repetition ratios.
function ratioTarget(results, scenario, baseline, param, metric, unit, holds, subject = 'parklock') {
  return rowRatioTarget(results, scenario, [subject, param], [baseline, param], metric, unit, holds);
}

// The same for any two rows of one scenario, each named by [impl, param].
function rowRatioTarget(results, scenario, [subject, param], [baseline, baseParam], metric, unit, holds) {
  const mine = findRow(results, scenario, subject, param);
  const theirs = findRow(results, scenario, baseline, baseParam);
  if (!mine || !theirs || mine.ok === 0 || theirs.ok === 0) return na(`not measured (${scenario})`);
  const ratio = mine.median[metric] / theirs.median[metric];
  const ratios = ratiosOf(mine, theirs, metric);
  const lo = Math.min(...ratios);
  const hi = Math.max(...ratios);
  return spreadVerdict([ratio, ...ratios], holds, `${ratio.toFixed(2)}x (runs ${lo.toFixed(2)}..` +
    `${hi.toFixed(2)}; ${formatNumber(mine.median[metric], 1)} vs ` +
    `${formatNumber(theirs.median[metric], 1)} ${unit})`);
}

// One target per parameter the scenario ran with (worker counts, waiter counts, ...).
function perParam(scenario, label, evaluate, wanted = () => true) {
  return (results) => {
    const s = results.scenarios[scenario];
    if (!s) return [{ target: label('*'), ...na(`not measured (${scenario})`) }];
    const params = [...new Set(s.rows.map((r) => r.param))].filter(wanted);
    return params.map((param) => ({ target: label(param), ...evaluate(results, param) }));
  };
}

// No throughput collapse once fairness hand-offs start: parklock's ops/s at the most workers
// measured is at least half its peak.
function noCollapse(results) {
  const s = results.scenarios.contended_tiny;
  if (!s) return na('not measured (contended_tiny)');
  const rows = s.rows.filter((r) => r.impl === 'parklock' && r.ok > 0);
  if (rows.length === 0) return na('no parklock run completed');
  const peak = rows.reduce((a, r) => (r.median.opsPerSec > a.median.opsPerSec ? r : a));
  const most = rows.reduce((a, r) => (r.param > a.param ? r : a));
  const share = most.median.opsPerSec / peak.median.opsPerSec;
  const worst = most.min.opsPerSec / peak.median.opsPerSec;
  return spreadVerdict([share, worst], (x) => x >= 0.5, `${(share * 100).toFixed(0)}% of the peak ` +
    `(${most.param} workers vs ${peak.param}; worst run ${(worst * 100).toFixed(0)}%)`);
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

function mixedMaxWait(results, busyWorkers) {
  const row = findRow(results, 'mixed', 'parklock', busyWorkers);
  if (!row || row.ok === 0) return na('not measured (mixed)');
  const typical = row.median.maxMs;
  // The control row (an event-loop turn with no lock, same busy workers) is the machine's own
  // floor for this number: with fewer free cores than busy threads it is the OS scheduler's.
  const floor = medianOf(results, 'mixed', 'control', busyWorkers, 'maxMs');
  return spreadVerdict([typical, ...row.values.maxMs], (x) => x <= 2, `${typical.toFixed(2)} ms ` +
    `median of per-run max (runs ${row.min.maxMs.toFixed(2)}..${row.max.maxMs.toFixed(2)} ms, p99 ` +
    `${formatNumber(row.median.p99Us, 0)} µs${floor === undefined ? '' : `; no-lock control: ` +
    `${floor.toFixed(2)} ms`})`);
}

// RWLock reads with `readers` readers against one reader, same section (rwlock_read scenario).
function readScaling(results, section, readers, limit) {
  const s = results.scenarios.rwlock_read;
  const row = (n) => s && s.rows.find((r) => r.impl === 'parklock-read' && r.param === `${section} x ${n}`);
  const many = row(readers);
  const one = row(1);
  if (!many || !one || many.ok === 0 || one.ok === 0) return na(`not measured (rwlock_read, ${readers} readers)`);
  return spreadVerdict([many.median.opsPerSec / one.median.opsPerSec, ...ratiosOf(many, one, 'opsPerSec')],
    (x) => x >= limit, `${(many.median.opsPerSec / one.median.opsPerSec).toFixed(2)}x one reader ` +
    `(${formatNumber(many.median.opsPerSec, 0)} vs ${formatNumber(one.median.opsPerSec, 0)} ops/s; ` +
    `runs ${ratiosOf(many, one, 'opsPerSec').map((x) => x.toFixed(2)).join(', ')})`);
}

// No worker starved: the smallest per-worker share over the largest (the fairness metric) stays
// at or above `limit` at the median and in every repetition.
function shareFloor(results, scenario, impl, param, limit) {
  const row = findRow(results, scenario, impl, param);
  if (!row || row.ok === 0) return na(`not measured (${scenario})`);
  const typical = row.median.fairness;
  return spreadVerdict([typical, ...row.values.fairness], (x) => x >= limit, `${typical.toFixed(2)} ` +
    `(runs ${row.min.fairness.toFixed(2)}..${row.max.fairness.toFixed(2)})`);
}

function cppPair(results, target, benchmark, pick, holds) {
  const cpp = results.cpp;
  if (!cpp || cpp.status !== 'ok') return na(cpp ? `C++ ${cpp.status}` : 'C++ not run');
  const program = cpp.programs.find((p) => p.target === target);
  const pair = program && program.pairs && program.pairs.find((p) => p.benchmark === benchmark);
  if (!pair || pair.error) return na(`${benchmark} ${pair ? pair.error : 'missing'}`);
  const ratio = pair[pick];
  // The extremes the repetitions allow (interleaved, but not paired): time ratios from the time
  // ranges, throughput ratios as their inverse.
  const [aMin, aMax] = pair.subjectRangeNs || [];
  const [bMin, bMax] = pair.referenceRangeNs || [];
  const ratios = aMin === undefined || bMin === undefined ? []
    : pick === 'timeRatio' ? [aMin / bMax, aMax / bMin] : [bMin / aMax, bMax / aMin];
  const range = ratios.length > 0
    ? ` (runs ${Math.min(...ratios).toFixed(2)}..${Math.max(...ratios).toFixed(2)})` : '';
  return spreadVerdict([ratio, ...ratios], holds, `${ratio.toFixed(2)}x ` +
    `${pick === 'timeRatio' ? 'time' : 'throughput'}${range} (${pair.subject} ` +
    `${formatNumber(pair.subjectNs, 1)} ns vs ${pair.reference} ${formatNumber(pair.referenceNs, 1)} ns)`);
}

function rssGrowth(results) {
  const mb = medianOf(results, 'memory', 'parklock', 'rss-1M', 'rssGrowthMB');
  if (mb === undefined) return na('not measured (memory)');
  return verdict(mb < 5, `${mb.toFixed(2)} MB`);
}

// Tracing with nobody subscribed against tracing stubbed out, for one diagnostics_cost workload
// (time per op, both measured in the same process); each repetition gives a ratio of its own.
function noSubscriberCost(results, workload, limit) {
  const row = findRow(results, 'diagnostics_cost', workload);
  if (!row || row.ok === 0) return na('not measured (diagnostics_cost)');
  const ratio = row.median.noSubRatio;
  return spreadVerdict([ratio, ...row.values.noSubRatio], (x) => x <= limit,
    `${ratio.toFixed(3)}x (runs ${row.min.noSubRatio.toFixed(3)}..${row.max.noSubRatio.toFixed(3)}; ` +
    `A/A ${row.median.aaRatio.toFixed(3)}; ${formatNumber(row.median.waits, 0)} traced waits per ` +
    'run when subscribed)');
}

const atMost = (limit) => (x) => x <= limit;
// Worker counts that contend (one worker alone is the uncontended case).
const contended = (workers) => workers >= 2;
const atLeast = (limit) => (x) => x >= limit;

// Each entry: [label, evaluate] for one target, or a function of the results returning rows
// (targets repeated per parameter).
const TARGETS = [
  ['uncontended sync <= 1.0x pure-JS three-state (ns/op)',
    (r) => ratioTarget(r, 'uncontended_sync', 'drepper', null, 'nsPerOp', 'ns/op', atMost(1.0))],
  ['uncontended lockAsync() <= 1.0x V8-blog waitAsync lock (ns/op)',
    (r) => ratioTarget(r, 'uncontended_async', 'v8-blog', LOCK_ASYNC, 'nsPerOp', 'ns/op', atMost(1.0))],
  ['uncontended lockAsync() <= 0.7x V8-blog waitAsync lock (ns/op)',
    (r) => ratioTarget(r, 'uncontended_async', 'v8-blog', LOCK_ASYNC, 'nsPerOp', 'ns/op', atMost(0.7))],
  ['uncontended executeLocked(fn) <= 1.5x lockAsync() + unlock() (ns/op)',
    (r) => rowRatioTarget(r, 'uncontended_async', ['parklock', EXECUTE_LOCKED], ['parklock', LOCK_ASYNC],
      'nsPerOp', 'ns/op', atMost(1.5))],
  ['ping-pong round trip <= 1.0x Atomics.Mutex',
    (r) => ratioTarget(r, 'ping_pong', 'v8-atomics', null, 'roundTripUs', 'µs', atMost(1.0))],
  ['ping-pong round trip <= 1.0x pure-JS three-state',
    (r) => ratioTarget(r, 'ping_pong', 'drepper', null, 'roundTripUs', 'µs', atMost(1.0))],
  perParam('contended_tiny', (n) => `contended sync, ${n} workers, tiny CS >= 1.5x pure-JS three-state`,
    (r, n) => ratioTarget(r, 'contended_tiny', 'drepper', n, 'opsPerSec', 'ops/s', atLeast(1.5)),
    contended),
  perParam('contended_tiny', (n) => `contended sync, ${n} workers, tiny CS >= 2x Atomics.Mutex`,
    (r, n) => ratioTarget(r, 'contended_tiny', 'v8-atomics', n, 'opsPerSec', 'ops/s', atLeast(2)),
    contended),
  ['contended sync: most workers >= 50% of the peak (no collapse)', noCollapse],
  perParam('burst', (p) => `${p.endsWith(' x 100000') ? 'burst' : 'steady'}, ${p} from cold >= ` +
    `${p.endsWith(' x 100000') ? '1.0' : '1.5'}x pure-JS three-state`,
  (r, p) => ratioTarget(r, 'burst', 'drepper', p, 'opsPerSec', 'ops/s',
    atLeast(p.endsWith(' x 100000') ? 1.0 : 1.5))),
  perParam('condition_requeue', (p) => `notifyAll (requeue) <= 1.0x waking all, ${p}`,
    (r, p) => ratioTarget(r, 'condition_requeue', 'notify-one', p, 'roundUs', 'µs', atMost(1.0),
      'requeue')),
  ['all-async contention completes every run', allAsyncCompletes],
  perParam('mixed', (n) => `mixed, ${n} busy workers: main-thread max wait <= 2 ms`, mixedMaxWait),
  perParam('mixed', (n) => `mixed, ${n} busy workers: total throughput >= pure-JS three-state (main sync)`,
    (r, n) => ratioTarget(r, 'mixed', 'drepper', n, 'totalOpsPerSec', 'ops/s', atLeast(1.0))),
  ['RWLock reads, 16 readers, ~2 µs section >= 8x one reader',
    (r) => readScaling(r, '2 µs', 16, 8)],
  ['RWLock reads, 2 readers, tiny section >= 1.0x Mutex',
    (r) => ratioTarget(r, 'rwlock_read', 'parklock', 'tiny x 2', 'opsPerSec', 'ops/s', atLeast(1.0),
      'parklock-read')],
  ['RWLock writer beside 4 readers: writes >= 0.5x pure-JS reader-writer lock',
    (r) => ratioTarget(r, 'rwlock_writer_share', 'js-rwlock', '1 + 4', 'writesPerSec', 'writes/s',
      atLeast(0.5), 'parklock-rw')],
  // The price of the writer's share must not be the readers': the hand-written lock keeps both.
  ['RWLock writer beside 4 readers: reads >= 0.5x pure-JS reader-writer lock',
    (r) => ratioTarget(r, 'rwlock_writer_share', 'js-rwlock', '1 + 4', 'readsPerSec', 'reads/s',
      atLeast(0.5), 'parklock-rw')],
  perParam('rwlock_write', (n) => `RWLock writers, ${n} workers, tiny CS >= 0.8x Mutex`,
    (r, n) => ratioTarget(r, 'rwlock_write', 'parklock', n, 'opsPerSec', 'ops/s', atLeast(0.8),
      'parklock-write'),
    contended),
  perParam('semaphore', (p) => `Semaphore, ${p} (workers x permits), tiny section >= 1.0x pure-JS ` +
    'semaphore (ops/s)',
  (r, p) => ratioTarget(r, 'semaphore', 'js-semaphore', p, 'opsPerSec', 'ops/s', atLeast(1.0),
    'parklock-semaphore')),
  perParam('semaphore', (p) => `Semaphore acquireAsync, ${p} (workers x permits) >= 1.0x blocking ` +
    'pure-JS semaphore (ops/s)',
  (r, p) => ratioTarget(r, 'semaphore', 'js-semaphore', p, 'opsPerSec', 'ops/s', atLeast(1.0),
    'parklock-semaphore-async')),
  perParam('semaphore', (p) => `Semaphore, ${p} (workers x permits): min/max share >= 0.1`,
    (r, p) => shareFloor(r, 'semaphore', 'parklock-semaphore', p, 0.1)),
  ['C++ core uncontended <= 1.2x std::mutex',
    (r) => cppPair(r, 'parklock_bench', 'BM_Uncontended', 'timeRatio', atMost(1.2))],
  ['C++ core contended 2 threads >= 1.0x std::mutex',
    (r) => cppPair(r, 'parklock_bench', 'BM_Contended/real_time/threads:2', 'throughputRatio', atLeast(1.0))],
  ...[4, 8, 16].map((n) => [`C++ core contended ${n} threads >= 1.5x std::mutex`,
    (r) => cppPair(r, 'parklock_bench', `BM_Contended/real_time/threads:${n}`, 'throughputRatio', atLeast(1.5))]),
  ...[4, 8, 16].map((n) => [`C++ notify_all (requeue) <= 1.0x notify_one each, ${n} waiters`,
    (r) => cppPair(r, 'parklock_condition_bench', `BM_WakeWaiters/${n}/manual_time`, 'timeRatio', atMost(1.0))]),
  ['RSS growth after 1M async cycles < 5 MB', rssGrowth],
  ['no subscriber <= 1.02x tracing bypassed: blocking waits (futex)',
    (r) => noSubscriberCost(r, 'blocking-wait', 1.02)],
  ['no subscriber <= 1.02x tracing bypassed: contended Mutex, 2 workers',
    (r) => noSubscriberCost(r, 'sync-contended', 1.02)],
  ['no subscriber <= 1.02x tracing bypassed: Promise waits (lockAsync)',
    (r) => noSubscriberCost(r, 'async-handoff', 1.02)],
];

function evaluateTargets(results) {
  return TARGETS.flatMap((entry) =>
    typeof entry === 'function' ? entry(results) : [{ target: entry[0], ...entry[1](results) }]);
}

module.exports = { evaluateTargets, spreadVerdict };
