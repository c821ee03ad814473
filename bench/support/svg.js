'use strict';
// bench/results/contention.svg: throughput against number of workers, one line per
// implementation, one panel per contended scenario. Hand-written SVG, no dependencies.
// The y axis is logarithmic: the implementations differ by factors, and equal ratios should look
// equally far apart. Dots are medians; the thin vertical bars span the min..max of the runs.

const COLORS = {
  parklock: '#d62728',
  drepper: '#1f77b4',
  'v8-blog': '#2ca02c',
  'v8-atomics': '#9467bd',
};
const PANEL = { width: 460, height: 340, left: 70, right: 20, top: 40, bottom: 50 };
const LEGEND_HEIGHT = 40;

const escape = (text) => String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const num = (v) => Number(v.toFixed(1));

function siLabel(value) {
  if (value >= 1e6) return `${value / 1e6}M`;
  if (value >= 1e3) return `${value / 1e3}k`;
  return String(value);
}

function panel(scenario, offsetX) {
  const rows = scenario.rows.filter((r) => r.ok > 0);
  const params = [...new Set(scenario.rows.map((r) => r.param))].sort((a, b) => a - b);
  const values = rows.flatMap((r) => [r.min.opsPerSec, r.max.opsPerSec]).filter((v) => v > 0);
  const parts = [];
  const plotW = PANEL.width - PANEL.left - PANEL.right;
  const plotH = PANEL.height - PANEL.top - PANEL.bottom;
  const x0 = offsetX + PANEL.left;
  const y0 = PANEL.top;
  parts.push(`<text x="${x0 + plotW / 2}" y="22" text-anchor="middle" font-size="14" font-weight="bold">` +
    `${escape(scenario.title)}</text>`);
  if (values.length === 0) {
    parts.push(`<text x="${x0 + plotW / 2}" y="${y0 + plotH / 2}" text-anchor="middle">no data</text>`);
    return parts.join('\n');
  }
  const lo = Math.floor(Math.log10(Math.min(...values)));
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(Math.max(...values))));
  const yOf = (v) => y0 + plotH - ((Math.log10(v) - lo) / (hi - lo)) * plotH;
  const xOf = (param) => x0 + ((params.indexOf(param) + 0.5) / params.length) * plotW;

  // Grid and y labels: each decade, and 2x / 5x in lighter lines.
  for (let decade = lo; decade <= hi; decade++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** decade;
      if (Math.log10(v) > hi) continue;
      const y = num(yOf(v));
      parts.push(`<line x1="${x0}" y1="${y}" x2="${x0 + plotW}" y2="${y}" stroke="${m === 1 ? '#bbb' : '#eee'}"/>`);
      parts.push(`<text x="${x0 - 6}" y="${y + 4}" text-anchor="end" font-size="${m === 1 ? 11 : 9}" ` +
        `fill="${m === 1 ? '#333' : '#888'}">${siLabel(v)}</text>`);
    }
  }
  for (const param of params) {
    const x = num(xOf(param));
    parts.push(`<text x="${x}" y="${y0 + plotH + 18}" text-anchor="middle" font-size="11">${param}</text>`);
  }
  parts.push(`<rect x="${x0}" y="${y0}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`);
  parts.push(`<text x="${x0 + plotW / 2}" y="${y0 + plotH + 38}" text-anchor="middle" font-size="12">` +
    `${escape(scenario.paramLabel || 'workers')}</text>`);
  parts.push(`<text transform="translate(${offsetX + 16},${y0 + plotH / 2}) rotate(-90)" ` +
    'text-anchor="middle" font-size="12">operations per second (all workers, log scale)</text>');

  const impls = [...new Set(rows.map((r) => r.impl))];
  for (const impl of impls) {
    const color = COLORS[impl] || '#555';
    const mine = rows.filter((r) => r.impl === impl).sort((a, b) => a.param - b.param);
    const points = mine.map((r) => `${num(xOf(r.param))},${num(yOf(r.median.opsPerSec))}`);
    parts.push(`<polyline points="${points.join(' ')}" fill="none" stroke="${color}" stroke-width="2"/>`);
    for (const r of mine) {
      const x = num(xOf(r.param));
      parts.push(`<line x1="${x}" y1="${num(yOf(r.min.opsPerSec))}" x2="${x}" y2="${num(yOf(r.max.opsPerSec))}" ` +
        `stroke="${color}" stroke-width="1"/>`);
      parts.push(`<circle cx="${x}" cy="${num(yOf(r.median.opsPerSec))}" r="3.5" fill="${color}">` +
        `<title>${escape(`${r.label}, ${r.param} workers: ${Math.round(r.median.opsPerSec)} ops/s`)}</title></circle>`);
    }
  }
  return parts.join('\n');
}

function legend(labels, y) {
  return labels.map(([impl, label], i) => {
    const x = 70 + i * 215;
    const color = COLORS[impl] || '#555';
    return `<line x1="${x}" y1="${y}" x2="${x + 24}" y2="${y}" stroke="${color}" stroke-width="2"/>` +
      `<circle cx="${x + 12}" cy="${y}" r="3.5" fill="${color}"/>` +
      `<text x="${x + 30}" y="${y + 4}" font-size="12">${escape(label)}</text>`;
  }).join('\n');
}

function renderContentionSvg(scenarios, caption) {
  const charted = scenarios.filter((s) => s && s.chart);
  const width = Math.max(1, charted.length) * PANEL.width;
  const height = PANEL.height + LEGEND_HEIGHT + 20;
  const labels = new Map();
  for (const s of charted) for (const r of s.rows) if (r.ok > 0) labels.set(r.impl, r.label);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" ` +
      `viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    ...charted.map((s, i) => panel(s, i * PANEL.width)),
    legend([...labels], PANEL.height + 14),
    `<text x="${width - 10}" y="${height - 8}" text-anchor="end" font-size="10" fill="#666">${escape(caption)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}

module.exports = { renderContentionSvg };
