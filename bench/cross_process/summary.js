'use strict';
// A run's results as data: one summary per case (the spread of its numbers over repetitions, and
// what failed) and parklock's ratios against the baselines. This is what --out writes, and what
// report.js prints.
const { median, min, max } = require('../support/stats');

const spread = (values) => ({ min: min(values), median: median(values), max: max(values), n: values.length });

function summarize(c) {
  const ok = c.outcomes.filter((o) => o.status === 'ok');
  const runs = c.outcomes.filter((o) => o.status !== 'skipped').length;
  const summary = {
    section: c.section,
    key: c.key,
    label: c.label,
    skipped: c.skip || null,
    runs,
    ok: ok.length,
    failures: c.outcomes.filter((o) => o.status === 'failed').map((o) => o.reason),
  };
  if (ok.length === 0) return summary;
  if (c.section === 'throughput') {
    return {
      ...summary,
      opsPerSec: spread(ok.map((o) => o.opsPerSec)),
      share: spread(ok.map((o) => o.share)),
      perRep: ok.map(({ opsPerSec, ops, counter, share }) => ({ opsPerSec, ops, counter, share })),
    };
  }
  if (c.section === 'handoff') {
    return {
      ...summary,
      medianUs: spread(ok.map((o) => o.medianUs)),
      p99Us: spread(ok.map((o) => o.p99Us)),
      perRep: ok.map(({ medianUs, p99Us, rounds }) => ({ medianUs, p99Us, rounds })),
    };
  }
  const samples = ok.flatMap((o) => o.samplesMs);
  return { ...summary, ms: spread(samples), perRep: ok.map((o) => o.samplesMs) };
}

function ratio(mine, theirs) {
  return mine !== undefined && theirs !== undefined && theirs > 0 ? mine / theirs : undefined;
}

// parklock's median over each baseline's median, same measure.
function computeRatios(rows) {
  const find = (section, key) => rows.find((r) => r.section === section && r.key === key) || {};
  const pick = (row, metric) => row[metric] && row[metric].median;
  const tp = (key) => pick(find('throughput', key), 'opsPerSec');
  const ho = (key, metric) => pick(find('handoff', key), metric);
  return {
    throughputVsFlock: ratio(tp('parklock'), tp('flock')),
    throughputVsProperLockfile: ratio(tp('parklock'), tp('proper-lockfile')),
    handOffMedianVsFlock: ratio(ho('parklock', 'medianUs'), ho('flock', 'medianUs')),
    handOffP99VsFlock: ratio(ho('parklock', 'p99Us'), ho('flock', 'p99Us')),
  };
}

module.exports = { summarize, computeRatios };
