'use strict';
// Plain-text tables for the terminal: one per scenario (medians, spread, runs, ratios against
// the baselines measured in the same run), one for the C++ benchmarks, one for the targets.

const DEFAULT_BASELINES = ['drepper', 'v8-blog', 'v8-atomics'];
const SHORT = { drepper: 'drepper', 'v8-blog': 'v8-blog', 'v8-atomics': 'Atomics.Mutex' };

function formatNumber(value, digits = 2) {
  if (value === undefined || value === null || Number.isNaN(value)) return '-';
  const magnitude = Math.abs(value);
  if (magnitude >= 1e6) return `${(value / 1e6).toFixed(2)}M`;
  if (magnitude >= 1e4 && digits === 0) return `${(value / 1e3).toFixed(1)}k`;
  return value.toFixed(digits);
}

const formatRatio = (ratio) => (ratio === undefined || !Number.isFinite(ratio) ? '-' : `${ratio.toFixed(2)}x`);

// rows: arrays of cells; the first row is the header. Text left-aligned, the rest right-aligned.
function render(rows, leftColumns = 1) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => String(row[c]).length)));
  const line = (row) => row
    .map((cell, c) => (c < leftColumns ? String(cell).padEnd(widths[c]) : String(cell).padStart(widths[c])))
    .join('  ')
    .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(rows[0]), rule, ...rows.slice(1).map(line)].join('\n');
}

// The baseline row with the same parameter, if that baseline ran and produced a number.
function baselineValue(scenario, baseline, param) {
  const row = scenario.rows.find((r) => r.impl === baseline && r.param === param);
  return row && row.median[scenario.primary];
}

function baselinesOf(scenario) {
  const wanted = scenario.baselines || DEFAULT_BASELINES;
  return wanted.filter((b) => scenario.rows.some((r) => r.impl === b && r.median[scenario.primary] !== undefined));
}

function ratiosOf(scenario, row) {
  const value = row.median[scenario.primary];
  return Object.fromEntries(baselinesOf(scenario).map((b) => {
    const base = baselineValue(scenario, b, row.param);
    return [b, value !== undefined && base ? value / base : undefined];
  }));
}

function formatScenario(scenario) {
  const hasParam = scenario.rows.some((r) => r.param !== null && r.param !== undefined);
  const baselines = baselinesOf(scenario);
  const primaryDef = scenario.metrics.find((m) => m.key === scenario.primary);
  const header = [
    'implementation',
    ...(hasParam ? [scenario.paramLabel || 'param'] : []),
    ...scenario.metrics.map((m) => m.label),
    `${primaryDef.label} range`,
    'runs ok',
    ...baselines.map((b) => `vs ${SHORT[b] || b}`),
  ];
  const rows = [header];
  const notes = [];
  for (const row of scenario.rows) {
    const ratios = ratiosOf(scenario, row);
    const cells = [row.label, ...(hasParam ? [row.param] : [])];
    if (row.skipped) {
      cells.push(`skipped`, ...scenario.metrics.slice(1).map(() => ''), '', '', ...baselines.map(() => ''));
      notes.push(`${row.label}${hasParam ? ` [${row.param}]` : ''}: skipped: ${row.skipped}`);
    } else if (row.ok === 0) {
      cells.push('FAILED', ...scenario.metrics.slice(1).map(() => ''), '', `0/${row.runs}`,
        ...baselines.map(() => ''));
    } else {
      for (const m of scenario.metrics) cells.push(formatNumber(row.median[m.key], m.digits));
      const lo = row.min[scenario.primary];
      const hi = row.max[scenario.primary];
      cells.push(row.ok > 1 ? `${formatNumber(lo, primaryDef.digits)}..${formatNumber(hi, primaryDef.digits)}` : '');
      cells.push(`${row.ok}/${row.runs}${row.ok < row.runs ? ' FAILED' : ''}`);
      for (const b of baselines) cells.push(formatRatio(ratios[b]));
    }
    rows.push(cells);
    if (row.failures.length > 0) {
      const distinct = [...new Set(row.failures)];
      notes.push(`${row.label}${hasParam ? ` [${row.param}]` : ''}: FAILED ${row.failures.length}/${row.runs}: ` +
        distinct.slice(0, 2).map((f) => f.slice(0, 300)).join(' | '));
    }
  }
  const units = scenario.metrics.filter((m) => m.better)
    .map((m) => `${m.label}: ${m.better} is better`).join('; ');
  const ratioNote = baselines.length > 0
    ? `\nratios: this row's ${primaryDef.label} / the baseline's, same ${hasParam ? scenario.paramLabel || 'param' : 'run'}`
    : '';
  let text = `\n== ${scenario.title} [${scenario.name}]\n${render(rows, hasParam ? 2 : 1)}\n(${units})${ratioNote}`;
  if (scenario.info) {
    text += `\n${scenario.info.title}:\n` + Object.entries(scenario.info.values)
      .map(([k, v]) => `  ${k.padEnd(28)} ${v}`).join('\n');
  }
  if (notes.length > 0) text += `\n${notes.map((n) => `  ! ${n}`).join('\n')}`;
  return text;
}

function formatCpp(cpp) {
  if (!cpp) return '';
  if (cpp.status !== 'ok') return `\n== C++ core (Google Benchmark)\n  skipped: ${cpp.reason}`;
  const range = ([lo, hi]) => `${formatNumber(lo, 1)}..${formatNumber(hi, 1)}`;
  const counters = (c) => Object.entries(c || {}).map(([k, v]) => `${k} ${formatNumber(v, 2)}`).join(' ');
  const rows = [['benchmark', 'subject', 'subject ns', 'range', 'reference', 'reference ns', 'range',
    'time ratio', 'throughput ratio', 'other']];
  const counted = [];
  const notes = [];
  for (const program of cpp.programs) {
    if (program.error) {
      notes.push(`${program.target} failed: ${program.error}`);
      continue;
    }
    for (const p of program.pairs) {
      if (counters(p.subjectCounters) || counters(p.referenceCounters)) {
        counted.push(`${p.benchmark}: ${p.subject} ${counters(p.subjectCounters)}; ` +
          `${p.reference} ${counters(p.referenceCounters)}`);
      }
      rows.push([
        p.benchmark, p.subject, formatNumber(p.subjectNs, 1), range(p.subjectRangeNs),
        p.reference, formatNumber(p.referenceNs, 1), range(p.referenceRangeNs),
        formatRatio(p.timeRatio), formatRatio(p.throughputRatio),
        Object.entries(p.others).map(([t, ns]) => `${t} ${formatNumber(ns, 1)} ns`).join(', '),
      ]);
      if (p.error) notes.push(`${p.benchmark}: ${p.error}`);
    }
  }
  return `\n== C++ core (Google Benchmark, median of ${cpp.repetitions} repetition(s), real time per iteration)\n` +
    `${render(rows, 2)}\n(time ratio = subject / reference, below 1 is faster; throughput ratio = subject / reference items/s;` +
    ' range = min..max over the repetitions)' +
    (counted.length ? `\ncounters (median per iteration):\n${counted.map((c) => `  ${c}`).join('\n')}` : '') +
    (notes.length ? `\n${notes.map((n) => `  ! ${n}`).join('\n')}` : '');
}

function formatTargets(targets) {
  const rows = [['target', 'status', 'measured']];
  for (const t of targets) rows.push([t.target, t.status, t.measured]);
  return `\n== Targets\n${render(rows, 3)}`;
}

module.exports = { formatScenario, formatCpp, formatTargets, formatNumber, formatRatio, ratiosOf, render };
