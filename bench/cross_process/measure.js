'use strict';
// The three measurements, seen from the parent: which processes each starts (child/*.js, or the
// C helper), how it starts and stops them, and what it makes of their reports. Each call is one
// repetition in a fresh slice of the region; it returns the numbers or throws why there are none.
const fs = require('node:fs');
const path = require('node:path');
const { median, min, max, percentile } = require('../support/stats');
const { checkCount } = require('../support/check');
const { SLOT } = require('./layout');
const { forkChild, spawnHelper, runGroup, goAll } = require('./processes');

// Generous ceilings on top of the time a measurement should take: they only bound how long a
// stuck measurement takes to fail.
const THROUGHPUT_SLACK_MS = 60_000;
const HAND_OFF_SLACK_MS = 60_000;
const HAND_OFF_MS_PER_ROUND = 5;
const DEATH_SLACK_MS = 30_000;
const DEATH_MS_PER_KILL = 10_000;

// ---------------------------------------------------------------------------------------------
// Throughput: N processes increment one counter under the lock for a window.

// The N contenders of one repetition, and how to read their counter afterwards. Every counter is
// 32 bits and wraps modulo 2^32, as (ops | 0) does, except proper-lockfile's decimal text.
function throughputContenders(impl, ctx, slice) {
  const { procs, ms } = ctx.options;
  const times = (make) => Array.from({ length: procs }, make);
  const regionCounter = () => ctx.word(slice + SLOT.COUNTER)[0];
  if (impl === 'parklock') {
    const spec = { mode: 'count', impl, region: ctx.region, slice };
    return { endpoints: times(() => forkChild(spec)), counter: regionCounter, wraps: true };
  }
  if (impl === 'named-lock' || impl === 'named-request') {
    // No lock file beforehand: the contenders' LockManagers create it between them.
    const spec = { mode: 'count', impl, region: ctx.region, slice, lockFile: path.join(ctx.dir, `named-${slice}.locks`) };
    return { endpoints: times(() => forkChild(spec)), counter: regionCounter, wraps: true };
  }
  if (impl === 'flock' && ctx.flock.kind === 'fs-ext') {
    const lockFile = ctx.file(`flock-${slice}.lock`, '');
    const spec = { mode: 'count', impl, region: ctx.region, slice, lockFile, module: ctx.flock.file };
    return { endpoints: times(() => forkChild(spec)), counter: regionCounter, wraps: true };
  }
  if (impl === 'flock') {
    // The C helper keeps its counter in a file of its own, and times its window itself.
    const lockFile = ctx.file(`flock-${slice}.lock`, '');
    const counterFile = ctx.file(`flock-${slice}.counter`, Buffer.alloc(4096));
    const args = ['count', lockFile, counterFile, String(SLOT.COUNTER), String(ms)];
    return {
      endpoints: times(() => spawnHelper(ctx.flock.binary, args)),
      counter: () => fs.readFileSync(counterFile).readInt32LE(SLOT.COUNTER),
      wraps: true,
    };
  }
  const counterFile = ctx.file(`proper-lockfile-${slice}.counter`, '0');
  const spec = { mode: 'count', impl, region: ctx.region, slice, counterFile, module: ctx.properLockfile.file };
  return { endpoints: times(() => forkChild(spec)), counter: () => Number(fs.readFileSync(counterFile, 'utf8')), wraps: false };
}

// The counter equals the acquisitions the processes reported only if the lock excluded: a
// mismatch makes the repetition a failure, not a number. The rate is over the span from the
// first process's start to the last one's end (hrtime and CLOCK_MONOTONIC: one clock for all).
function checkedRate(reports, counter) {
  const each = reports.map((r) => r.ops);
  const ops = each.reduce((sum, n) => sum + n, 0);
  checkCount(counter.value, counter.wraps ? ops | 0 : ops, 'the shared counter');
  const seconds = (max(reports.map((r) => r.end)) - min(reports.map((r) => r.start))) / 1e9;
  // share: 1 = every process got the same share; near 0 = one process had the lock almost all
  // the time.
  return { opsPerSec: ops / seconds, ops, counter: counter.value, share: min(each) / max(each) };
}

async function measureThroughput(impl, ctx) {
  const slice = ctx.newSlice();
  const stop = ctx.word(slice + SLOT.STOP);
  const { endpoints, counter, wraps } = throughputContenders(impl, ctx, slice);
  let stopTimer;
  const reports = await runGroup(endpoints, {
    timeLimitMs: ctx.options.ms + THROUGHPUT_SLACK_MS,
    begin(all) {
      goAll(all);
      stopTimer = setTimeout(() => Atomics.store(stop, 0, 1), ctx.options.ms);
    },
  }).finally(() => clearTimeout(stopTimer));
  return checkedRate(reports, { value: counter(), wraps });
}

// ---------------------------------------------------------------------------------------------
// Hand-off: 2 processes pass control back and forth through three locks (child/ping_pong.js).

function pingPongSides(impl, ctx, slice) {
  const { warmup, rounds } = ctx.options;
  const lockFiles = () => [0, 1, 2].map((i) => ctx.file(`ping-${slice}-${i}.lock`, ''));
  if (impl === 'flock' && ctx.flock.kind === 'c') {
    const files = lockFiles();
    return ['a', 'b'].map((role) =>
      spawnHelper(ctx.flock.binary, ['pingpong', role, ...files, String(warmup), String(rounds)]));
  }
  const flock = impl === 'flock' ? { lockFiles: lockFiles(), module: ctx.flock.file } : {};
  return ['a', 'b'].map((role) =>
    forkChild({ mode: 'pingpong', impl, role, region: ctx.region, slice, ...flock, warmup, rounds }));
}

async function measureHandOff(impl, ctx) {
  const slice = ctx.newSlice();
  const { warmup, rounds } = ctx.options;
  const [lead] = await runGroup(pingPongSides(impl, ctx, slice), {
    timeLimitMs: HAND_OFF_SLACK_MS + (warmup + rounds) * HAND_OFF_MS_PER_ROUND,
    begin: goAll,
  });
  if (lead.samples.length !== rounds) {
    throw new Error(`${lead.samples.length} round trips reported, ${rounds} expected`);
  }
  // A round trip is two hand-offs (A to B, B back to A).
  const handOffsUs = lead.samples.map((ns) => ns / 2 / 1e3);
  return { medianUs: median(handOffsUs), p99Us: percentile(handOffsUs, 99), rounds: handOffsUs.length };
}

// ---------------------------------------------------------------------------------------------
// Owner death: one coordinator process kills holders (child/owner_death.js).

async function measureOwnerDeath(variant, ctx) {
  const slice = ctx.newSlice();
  const { kills } = ctx.options;
  const coordinator = forkChild({ mode: 'death', variant, kills, region: ctx.region, slice });
  const [report] = await runGroup([coordinator], {
    timeLimitMs: DEATH_SLACK_MS + kills * DEATH_MS_PER_KILL,
    begin: goAll,
  });
  return { samplesMs: report.samples };
}

module.exports = { measureThroughput, measureHandOff, measureOwnerDeath };
