'use strict';
// What bench/named_locks.js makes of its cases' outcomes: each row's median and range per
// metric, its ratio to its baseline repetition by repetition (the repetitions interleave, so
// repetition i of both ran side by side), the targets, and the report's tables.
const { median, min, max } = require('../support/stats');
const { render, formatNumber } = require('../support/table');
const { spreadVerdict } = require('../support/targets');

const METRICS = {
  burstOpsPerSec: { label: 'burst, acquisitions/s', better: 'higher', digits: 0 },
  steadyOpsPerSec: { label: 'steady, acquisitions/s', better: 'higher', digits: 0 },
  // Counts of defects, not rates: no ratio to a baseline.
  overlaps: { label: 'callbacks that overlapped another holder', better: 'lower', digits: 0, noRatio: true },
  lostIncrements: { label: 'counter increments lost', better: 'lower', digits: 0, noRatio: true },
  burstNsPerOp: { label: 'burst, ns per acquire+release', better: 'lower', digits: 0 },
  steadyNsPerOp: { label: 'steady, ns per acquire+release', better: 'lower', digits: 0 },
  rssGrowthMB: { label: 'RSS growth from cold, MB', better: 'lower', digits: 2 },
  heapTotalGrowthMB: { label: 'JS heap reserved, growth from cold, MB', better: 'lower', digits: 2 },
  heapUsedGrowthMB: { label: 'JS heap used, growth from cold, MB', better: 'lower', digits: 2 },
  warmRssGrowthMB: { label: 'RSS growth, warm, MB', better: 'lower', digits: 2 },
  anchorRssGrowthMB: { label: 'RSS growth from cold, same loop on executeLocked(), MB', better: 'lower', digits: 2, noRatio: true },
  rssAboveAnchorMB: { label: 'RSS growth from cold beyond that loop, MB', better: 'lower', digits: 2, noRatio: true },
  nsPerName: { label: 'ns per name', better: 'lower', digits: 0 },
};

// The baseline each row is compared with, per scenario: [row, baseline].
const BASELINES = {
  workers: [['parklock', 'node']],
  uncontended: [['request', 'executeLocked'], ['lock', 'mutex-lock']],
  processes: [['named-lock', 'flock'], ['named-lock', 'proper-lockfile'], ['named-request', 'flock'], ['named-request', 'proper-lockfile']],
  memory: [['parklock', 'node']],
};

const atLeast = (limit) => (x) => x >= limit;
const atMost = (limit) => (x) => x <= limit;
const BURST_AND_STEADY = (kind) => [`burst${kind}`, `steady${kind}`];

// [scenario, row, baseline or null, metrics, holds, label].
const TARGETS = [
  ['workers', 'parklock', 'node', BURST_AND_STEADY('OpsPerSec'), atLeast(20), '4 workers, request() >= 20x worker_threads.locks'],
  ['uncontended', 'request', 'executeLocked', BURST_AND_STEADY('NsPerOp'), atMost(1.5), 'uncontended request() <= 1.5x the time of executeLocked()'],
  ['processes', 'named-lock', 'proper-lockfile', BURST_AND_STEADY('OpsPerSec'), atLeast(100), '4 processes, LockManager lock() >= 100x proper-lockfile'],
  ['processes', 'named-lock', 'flock', BURST_AND_STEADY('OpsPerSec'), atLeast(1), '4 processes, LockManager lock() >= flock(2)'],
  ['memory', 'parklock', null, ['rssGrowthMB', 'rssAboveAnchorMB', 'warmRssGrowthMB'], (x) => x < 10, '100,000 names held and released: RSS growth < 10 MB'],
];

const spread = (values) => ({ median: median(values), min: min(values), max: max(values) });

function summarize(c) {
  const row = { scenario: c.scenario, key: c.key, label: c.label, runs: c.outcomes.length, failures: [], metrics: {} };
  if (c.skip) return { ...row, skipped: c.skip };
  for (const outcome of c.outcomes) if (outcome.status === 'failed') row.failures.push(outcome.reason);
  const ok = c.outcomes.filter((o) => o.status === 'ok');
  row.ok = ok.length;
  for (const metric of Object.keys(METRICS)) {
    if (ok.length === 0 || ok[0][metric] === undefined) continue;
    const perRep = c.outcomes.map((o) => (o.status === 'ok' ? o[metric] : undefined));
    row.metrics[metric] = { ...spread(perRep.filter((v) => v !== undefined)), perRep };
  }
  return row;
}

const findRow = (rows, scenario, key) => rows.find((r) => r.scenario === scenario && r.key === key);

// The ratios row / baseline of one metric, repetition by repetition, where both completed it.
function pairedRatios(row, base, metric) {
  const mine = row && row.metrics[metric];
  const theirs = base && base.metrics[metric];
  if (!mine || !theirs) return undefined;
  const ratios = mine.perRep.map((v, i) => (v === undefined || theirs.perRep[i] === undefined ? undefined : v / theirs.perRep[i]))
    .filter((r) => r !== undefined);
  return ratios.length ? spread(ratios) : undefined;
}

function computeRatios(rows) {
  return Object.entries(BASELINES).flatMap(([scenario, pairs]) => pairs.flatMap(([key, baseline]) =>
    Object.keys(METRICS).filter((metric) => !METRICS[metric].noRatio).map((metric) => ({
      scenario, key, baseline, metric,
      ratio: pairedRatios(findRow(rows, scenario, key), findRow(rows, scenario, baseline), metric),
    })).filter((r) => r.ratio !== undefined)));
}

const fmtRatio = (r) => `${r.median.toFixed(2)}x (${r.min.toFixed(2)}..${r.max.toFixed(2)})`;

function evaluateTargets(rows, ratios) {
  return TARGETS.flatMap(([scenario, key, baseline, metrics, holds, label]) => metrics.map((metric) => {
    const target = `${label} [${METRICS[metric].label}]`;
    if (baseline === null) {
      const m = findRow(rows, scenario, key)?.metrics[metric];
      if (!m) return { target, status: 'N/A', measured: 'not measured' };
      const verdict = spreadVerdict(m.perRep.filter((v) => v !== undefined), holds, '');
      return { target, status: verdict.status, measured: `${m.median.toFixed(2)} (${m.min.toFixed(2)}..${m.max.toFixed(2)})` };
    }
    const found = ratios.find((r) => r.scenario === scenario && r.key === key && r.baseline === baseline && r.metric === metric);
    if (!found) return { target, status: 'N/A', measured: 'not measured' };
    const { ratio } = found;
    return { target, ...spreadVerdict([ratio.median, ratio.min, ratio.max], holds, fmtRatio(ratio)) };
  }));
}

function formatRows(rows, ratios) {
  const table = [['scenario', 'implementation', 'metric', 'median', 'range', 'runs ok', 'vs', 'ratio, median (range)']];
  const notes = [];
  for (const row of rows) {
    if (row.skipped) {
      table.push([row.scenario, row.label, 'skipped', '', '', '', '', '']);
      notes.push(`${row.label}: skipped: ${row.skipped}`);
      continue;
    }
    for (const [metric, m] of Object.entries(row.metrics)) {
      const { digits } = METRICS[metric];
      const against = ratios.filter((r) => r.scenario === row.scenario && r.key === row.key && r.metric === metric);
      const first = [row.scenario, row.label, METRICS[metric].label, formatNumber(m.median, digits),
        `${formatNumber(m.min, digits)}..${formatNumber(m.max, digits)}`, `${row.ok}/${row.runs}`];
      if (against.length === 0) table.push([...first, '', '']);
      against.forEach((r, i) => table.push([...(i === 0 ? first : first.map(() => '')), r.baseline, fmtRatio(r.ratio)]));
    }
    if (row.ok === 0) table.push([row.scenario, row.label, 'FAILED', '', '', `0/${row.runs}`, '', '']);
    for (const failure of new Set(row.failures)) notes.push(`${row.label}: FAILED: ${failure.slice(0, 300)}`);
  }
  return `${render(table, 3)}${notes.length ? `\n${notes.map((n) => `  ! ${n}`).join('\n')}` : ''}`;
}

function formatTargets(targets) {
  return render([['target', 'status', 'measured: ratio median (range over repetitions)'],
    ...targets.map((t) => [t.target, t.status, t.measured])], 3);
}

module.exports = { summarize, computeRatios, evaluateTargets, formatRows, formatTargets };
