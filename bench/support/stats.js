'use strict';
// Small statistics helpers. Medians everywhere: on a shared, noisy machine one slow repetition
// (another process took the core) must not move the reported number.

function sorted(values) {
  return [...values].sort((a, b) => a - b);
}

// The p-th percentile (0..100) by nearest rank on the sorted values; undefined for no values.
function percentile(values, p) {
  if (values.length === 0) return undefined;
  const s = sorted(values);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))];
}

function median(values) {
  if (values.length === 0) return undefined;
  const s = sorted(values);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

// Loops, not Math.min(...values): spreading ~100k values (the mixed scenario's waits) as
// arguments overflows the stack.
function min(values) {
  if (values.length === 0) return undefined;
  let least = values[0];
  for (const v of values) if (v < least) least = v;
  return least;
}

function max(values) {
  if (values.length === 0) return undefined;
  let most = values[0];
  for (const v of values) if (v > most) most = v;
  return most;
}

// Nanoseconds between two process.hrtime.bigint() readings, as a Number.
function elapsedNs(start, end = process.hrtime.bigint()) {
  return Number(end - start);
}

module.exports = { percentile, median, min, max, elapsedNs };
