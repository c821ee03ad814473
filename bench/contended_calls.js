'use strict';
// Contended calls into the addon: 2 workers hammer one Mutex (lock/unlock) and then one
// Semaphore(1) (acquire/release) for a fixed time; prints ops/s of each as one JSON line.
//
//   node bench/contended_calls.js [libDir] [durationMs]
//
// libDir (default: this checkout's lib/) lets one run compare two builds of parklock, each
// loaded from its own checkout.
const path = require('node:path');
const { Worker, isMainThread, workerData, parentPort } = require('node:worker_threads');

const WORKERS = 2;

if (isMainThread) {
  const libDir = path.resolve(process.argv[2] || path.join(__dirname, '..', 'lib'));
  const durationMs = Number(process.argv[3] || 1000);
  const { Mutex, Semaphore } = require(libDir);

  const run = async (kind, primitive) => {
    const start = new Int32Array(new SharedArrayBuffer(4));
    const workers = [];
    for (let i = 0; i < WORKERS; i++) {
      workers.push(new Worker(__filename, { workerData: { libDir, kind, primitive, start, durationMs } }));
    }
    const counts = workers.map((w) => new Promise((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
    }));
    // Every worker is loaded before any starts, so the whole time is contended.
    await new Promise((resolve) => setTimeout(resolve, 300));
    Atomics.store(start, 0, 1);
    Atomics.notify(start, 0);
    const ops = (await Promise.all(counts)).reduce((a, b) => a + b, 0);
    return Math.round(ops / (durationMs / 1000));
  };

  (async () => {
    const mutex = await run('mutex', new Mutex());
    const semaphore = await run('semaphore', new Semaphore(1));
    console.log(JSON.stringify({ lib: libDir, mutex, semaphore }));
  })();
} else {
  const { libDir, kind, primitive, start, durationMs } = workerData;
  const { Mutex, Semaphore } = require(libDir);
  const lock = kind === 'mutex' ? new Mutex(primitive) : new Semaphore(primitive);
  const [take, give] = kind === 'mutex' ? ['lock', 'unlock'] : ['acquire', 'release'];
  Atomics.wait(start, 0, 0);
  const end = performance.now() + durationMs;
  let ops = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 64; i++) {
      lock[take]();
      lock[give]();
    }
    ops += 64;
  }
  parentPort.postMessage(ops);
}
