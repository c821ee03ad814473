'use strict';
// The uncontended Promise path, each form against the V8-blog waitAsync lock, every row measured
// in the same run with its repetitions interleaved and their order rotated. Burst: a fresh worker
// thread per row times its first --burst calls from a cold start (nothing compiled yet). Steady:
// one worker thread per repetition runs every row, --warmup calls each, then --batches rounds in
// which every row runs a batch of --steady calls, so that the rows pair up in time; a row's
// fastest batch counts (on a shared machine interference only ever adds time to a
// single-threaded loop).
//
//   blog            await lock.lockAsync() + lock.unlock() on bench/baselines/v8_blog_async_lock.js
//   lockAsync       await mutex.lockAsync() + mutex.unlock()
//   executeLocked   await mutex.executeLocked(fn), fn returning at once
//   blog-execute    await lock.executeLocked(fn) on the V8-blog lock
//   request         await locks.request(name, fn), fn returning at once
//
// --lib DIR loads parklock from DIR (a lib/ directory) in the workers whose row ends in '@DIR'
// as well, so that two builds compare in one run: `--lib /tmp/before/lib` adds the rows
// lockAsync@before, executeLocked@before and request@before.
const path = require('node:path');
const { Worker, isMainThread, workerData, parentPort, threadId } = require('node:worker_threads');
const { walkArgv, checkPositiveInteger } = require('./support/argv');
const { median } = require('./support/stats');

const DEFAULTS = { reps: 5, burst: 1000, warmup: 20000, steady: 100000, batches: 5 };
const USAGE = `usage: node bench/promise_path.js [--reps N] [--burst N] [--warmup N] [--steady N]
  [--batches N] [--only row,row] [--lib DIR]`;
const OPS = ['blog', 'lockAsync', 'executeLocked', 'blog-execute', 'request'];
const OF_PARKLOCK = ['lockAsync', 'executeLocked', 'request'];

function nothing() {}

function opsOf(lib) {
  const { Mutex, locks } = require(lib);
  const { V8BlogAsyncLock } = require('./baselines/v8_blog_async_lock');
  const mutex = new Mutex();
  const blog = new V8BlogAsyncLock(new SharedArrayBuffer(4));
  const name = `promise-path-${threadId}`;
  // Each loop awaits one acquire-and-release per iteration, in the loop itself (no async layer
  // of the benchmark's own around it).
  return {
    async blog(n) {
      for (let i = 0; i < n; i++) {
        await blog.lockAsync();
        blog.unlock();
      }
    },
    async lockAsync(n) {
      for (let i = 0; i < n; i++) {
        await mutex.lockAsync();
        mutex.unlock();
      }
    },
    async executeLocked(n) {
      for (let i = 0; i < n; i++) await mutex.executeLocked(nothing);
    },
    async 'blog-execute'(n) {
      for (let i = 0; i < n; i++) await blog.executeLocked(nothing);
    },
    async request(n) {
      for (let i = 0; i < n; i++) await locks.request(name, nothing);
    },
  };
}

async function timeNs(loop, count) {
  const start = process.hrtime.bigint();
  await loop(count);
  return Number(process.hrtime.bigint() - start);
}

// A fresh thread's first `burst` calls of one row.
async function burstHere({ op, lib, burst }) {
  return (await timeNs(opsOf(lib)[op], burst)) / burst;
}

// Every row in one thread, warmed up, then `batches` rounds each running every row's batch once
// (in rotated order), so that the rows pair up in time: each row's fastest batch.
async function steadyHere({ rows, warmup, steady, batches }) {
  const loops = rows.map(({ op, lib }) => opsOf(lib)[op]);
  for (const loop of loops) await timeNs(loop, warmup);
  const best = loops.map(() => Infinity);
  for (let b = 0; b < batches; b++) {
    for (let k = 0; k < loops.length; k++) {
      const i = (k + b) % loops.length;
      best[i] = Math.min(best[i], (await timeNs(loops[i], steady)) / steady);
    }
  }
  return best;
}

function inWorker(data) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(__filename, { workerData: data });
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`worker exited (${code}) without a result`)));
  });
}

function parse(argv) {
  const options = { ...DEFAULTS, only: OPS, extraLib: undefined };
  walkArgv(argv, USAGE, (arg, value) => {
    const key = arg.replace(/^--/, '');
    if (key in DEFAULTS) options[key] = Number(value());
    else if (arg === '--only') options.only = value().split(',');
    else if (arg === '--lib') options.extraLib = path.resolve(value());
    else return false;
    return true;
  });
  for (const key of Object.keys(DEFAULTS)) checkPositiveInteger(`--${key}`, options[key]);
  const unknown = options.only.filter((op) => !OPS.includes(op));
  if (unknown.length > 0) throw new Error(`unknown row ${unknown.join(', ')} (rows: ${OPS.join(', ')})`);
  return options;
}

const fmt = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
const spread = (xs) => `${fmt(median(xs))} (${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))})`;
const ratioSpread = (xs) =>
  `${median(xs).toFixed(2)}x (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`;

async function main() {
  const options = parse(process.argv.slice(2));
  const ownLib = path.join(__dirname, '..', 'lib');
  const rows = options.only.map((op) => ({ label: op, op, lib: ownLib }));
  if (options.extraLib !== undefined) {
    const tag = path.basename(path.dirname(options.extraLib));
    for (const op of options.only.filter((o) => OF_PARKLOCK.includes(o))) {
      rows.push({ label: `${op}@${tag}`, op, lib: options.extraLib });
    }
  }
  const results = new Map(rows.map((row) => [row.label, []]));
  const { reps, burst, warmup, steady, batches } = options;
  for (let rep = 0; rep < reps; rep++) {
    // Rotated, so that no row always runs first (or right after the same neighbour).
    const order = rows.map((_, i) => rows[(i + rep) % rows.length]);
    const bursts = new Map();
    for (const row of order) {
      bursts.set(row.label, await inWorker({ phase: 'burst', op: row.op, lib: row.lib, burst }));
    }
    const steadies = await inWorker({ phase: 'steady', rows: order, warmup, steady, batches });
    order.forEach((row, i) => {
      results.get(row.label).push({ burstNs: bursts.get(row.label), steadyNs: steadies[i] });
    });
  }
  console.log(`node ${process.version}; ${reps} repetitions; burst: the first ${burst} calls of a fresh ` +
    `thread; steady: every row in one thread, the fastest of ${batches} interleaved batches of ${steady} ` +
    `after ${warmup}; ns per call, ` +
    'median (min–max)');
  const ratios = (label, base, key) => {
    const a = results.get(label);
    const b = results.get(base);
    return a && b ? a.map((r, i) => r[key] / b[i][key]) : undefined;
  };
  for (const row of rows) {
    const r = results.get(row.label);
    const cells = [`${row.label.padEnd(22)} burst ${spread(r.map((x) => x.burstNs)).padEnd(22)} steady ` +
      `${spread(r.map((x) => x.steadyNs)).padEnd(22)}`];
    // Against the V8-blog lock's lockAsync(), and executeLocked() against lockAsync() + unlock().
    const base = row.op === 'executeLocked' ? row.label.replace('executeLocked', 'lockAsync') : 'blog';
    if (row.label !== base) {
      const burstRatios = ratios(row.label, base, 'burstNs');
      const steadyRatios = ratios(row.label, base, 'steadyNs');
      if (burstRatios) cells.push(`/ ${base}: burst ${ratioSpread(burstRatios)}, steady ${ratioSpread(steadyRatios)}`);
    }
    console.log(cells.join(' '));
  }
}

if (isMainThread) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
} else {
  (workerData.phase === 'burst' ? burstHere : steadyHere)(workerData).then((result) => parentPort.postMessage(result));
}
