'use strict';
// The run's report as Markdown: one table per measurement, the ratios, and every skip and
// failure with its reason.

function formatValue(value, digits) {
  if (value === undefined || value === null || Number.isNaN(value)) return '-';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function formatRatio(value) {
  if (value === undefined || !Number.isFinite(value)) return '-';
  return value >= 100 ? `${formatValue(value, 0)}x` : `${value.toFixed(2)}x`;
}

function table(header, rows, align) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(header), line(align.map((a) => (a === 'r' ? '---:' : '---'))), ...rows.map(line)].join('\n');
}

function runsCell(row) {
  if (row.skipped) return 'skipped';
  return row.ok === row.runs ? `${row.ok}/${row.runs}` : `${row.ok}/${row.runs} FAILED`;
}

function throughputTable(rows, ratios) {
  const vs = {
    parklock: '1.00x',
    flock: formatRatio(ratios.throughputVsFlock),
    'proper-lockfile': formatRatio(ratios.throughputVsProperLockfile),
  };
  const body = rows.map((r) => (r.opsPerSec
    ? [r.label, formatValue(r.opsPerSec.median, 0), formatValue(r.opsPerSec.min, 0), formatValue(r.opsPerSec.max, 0),
        formatValue(r.share.median, 2), `exact ${runsCell(r)}`, vs[r.key]]
    : [r.label, '-', '-', '-', '-', runsCell(r), '-']));
  return table(
    ['implementation', 'acquisitions/s (median)', 'min', 'max', 'min/max share', 'counter check', 'parklock / this (>1: parklock faster)'],
    body,
    ['l', 'r', 'r', 'r', 'r', 'l', 'r'],
  );
}

function handOffTable(rows, ratios) {
  const vs = { parklock: ['1.00x', '1.00x'], flock: [formatRatio(ratios.handOffMedianVsFlock), formatRatio(ratios.handOffP99VsFlock)] };
  const line = (r, name, spread, ratio) =>
    [r.label, name, formatValue(spread.median, 2), formatValue(spread.min, 2), formatValue(spread.max, 2), runsCell(r), ratio];
  const body = rows.flatMap((r) => (r.medianUs
    ? [line(r, 'median', r.medianUs, vs[r.key][0]), line(r, 'p99', r.p99Us, vs[r.key][1])]
    : [[r.label, '-', '-', '-', '-', runsCell(r), '-']]));
  return table(
    ['implementation', 'per hand-off', 'µs (median of reps)', 'min', 'max', 'runs ok', 'parklock / this (<1: parklock faster)'],
    body,
    ['l', 'l', 'r', 'r', 'r', 'l', 'r'],
  );
}

function deathTable(rows) {
  const body = rows.map((r) => (r.ms
    ? [r.label, String(r.ms.n), formatValue(r.ms.min, 2), formatValue(r.ms.median, 2), formatValue(r.ms.max, 2), runsCell(r)]
    : [r.label, '0', '-', '-', '-', runsCell(r)]));
  body.push(['proper-lockfile (not measured)', '-', '-', '-', '-', 'see below']);
  return table(['ERR_PARKLOCK_OWNER_DIED reported', 'kills', 'min ms', 'median ms', 'max ms', 'runs ok'], body,
    ['l', 'r', 'r', 'r', 'r', 'l']);
}

function ratiosTable(ratios, procs) {
  return table(
    ['measure (medians of this run)', 'parklock / flock', 'parklock / proper-lockfile'],
    [
      [`acquisitions/s, ${procs} processes (higher: parklock faster)`, formatRatio(ratios.throughputVsFlock),
        formatRatio(ratios.throughputVsProperLockfile)],
      ['median hand-off µs (lower: parklock faster)', formatRatio(ratios.handOffMedianVsFlock), '-'],
      ['p99 hand-off µs (lower: parklock faster)', formatRatio(ratios.handOffP99VsFlock), '-'],
    ],
    ['l', 'r', 'r'],
  );
}

// The target of a blocked waiter's wake-up across processes: a hand-off no slower than flock(2)'s.
function targetsTable(ratios) {
  const ratio = ratios.handOffMedianVsFlock;
  const status = ratio === undefined ? 'N/A' : ratio <= 1 ? 'PASS' : 'MISS';
  return table(
    ['target', 'status', 'measured'],
    [['2-process hand-off, median <= 1.0x flock(2)', status, formatRatio(ratio)]],
    ['l', 'l', 'r'],
  );
}

function problemLines(rows) {
  const lines = [];
  for (const r of rows) {
    if (r.skipped) lines.push(`- ${r.section} / ${r.label}: skipped: ${r.skipped}`);
    for (const reason of new Set(r.failures)) lines.push(`- ${r.section} / ${r.label}: FAILED: ${reason}`);
  }
  return lines;
}

// meta: the run's circumstances (see cross_process.js); rows and ratios: from summary.js.
function formatReport(meta, rows, ratios) {
  const section = (name) => rows.filter((r) => r.section === name);
  const o = meta.options;
  const out = [
    '# parklock cross-process benchmark',
    '',
    `node ${meta.node}, ${meta.platform}, ${meta.cpus} CPUs (${meta.cpuModel}), load ${meta.loadavgAtStart.map((l) => l.toFixed(2)).join(' ')}, ` +
      `${o.reps} rep(s)${o.quick ? ', quick' : ''}, ${meta.durationSec.toFixed(0)} s`,
    `- flock rows: ${meta.flock}`,
    `- proper-lockfile row: ${meta.properLockfile}`,
    '',
    `## Throughput: ${o.procs} processes incrementing one counter under the lock, ${o.ms} ms per rep`,
    '',
    'min / median / max over repetitions; min/max share: the fewest acquisitions any process made over the most (median over ' +
      'repetitions; 1 = even); the counter check compares the counter with the sum of the acquisitions the processes reported.',
    '',
    throughputTable(section('throughput'), ratios),
    '',
    `## Hand-off latency: 2 processes, ${o.rounds} round trips per rep (after ${o.warmup} warm-up), through three locks`,
    '',
    'Half of each round trip; the median and the p99 of each repetition, then min / median / max of those over repetitions.',
    '',
    handOffTable(section('handoff'), ratios),
    '',
    '## Owner death: a SIGKILLed holder, until the next acquirer gets ERR_PARKLOCK_OWNER_DIED',
    '',
    `${o.kills} kills per case and repetition, min / median / max over all of them.`,
    '',
    deathTable(section('death')),
    '',
    'proper-lockfile has no owner-death report: a dead holder\'s lock directory is taken over once it is stale, ' +
      'i.e. its mtime is older than `stale` (default and here 10 s; documented minimum 5 s, 4.x clamps at 2 s). The holder refreshes ' +
      'the mtime every stale/2, so with stale: 10000 a waiter gets the lock 5 to 10 s after the holder died.',
    '',
    '## Ratios',
    '',
    ratiosTable(ratios, o.procs),
    '',
    '## Targets',
    '',
    targetsTable(ratios),
  ];
  const problems = problemLines(rows);
  if (problems.length > 0) out.push('', '## Problems', '', ...problems);
  return out.join('\n');
}

module.exports = { formatReport };
