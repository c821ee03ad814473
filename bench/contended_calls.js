'use strict';
// Contended calls into the addon: 2 workers hammer one Mutex (lock/unlock) and then one
// Semaphore(1) (acquire/release) for a fixed time; then, on one thread, the cost of a call that
// always enters the addon and finds nothing to do (unlock() of a mutex marked parked, notifyOne()
// of a condition marked as having waiters), and of a lockAsync() that queues and is settled
// through the addon (asyncHandoff). Prints ops/s of each as one JSON line.
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

  // Calls per second of `call`, which must enter the addon each time.
  const rate = (call) => {
    const end = performance.now() + durationMs;
    let ops = 0;
    while (performance.now() < end) {
      for (let i = 0; i < 256; i++) call();
      ops += 256;
    }
    return Math.round(ops / (durationMs / 1000));
  };

  const slowCalls = () => {
    const { Condition } = require(libDir);
    const { threadId } = require(path.join(libDir, 'async_waits'));
    const { OWNER_SHIFT, LOCKED_PARKED } = require(path.join(libDir, 'native')).mutexLayout;
    const m = new Mutex();
    const mutexWord = new Int32Array(m.buffer, m.byteOffset, 1);
    const parked = (threadId << OWNER_SHIFT) | LOCKED_PARKED;
    const unlockSlow = rate(() => {
      Atomics.store(mutexWord, 0, parked);
      m.unlock();
    });
    const c = new Condition();
    const conditionWord = new Int32Array(c.buffer, c.byteOffset, 1);
    const notifyOne = rate(() => {
      Atomics.store(conditionWord, 0, 1);
      c.notifyOne();
    });
    return { unlockSlow, notifyOne };
  };

  // Each round queues a lockAsync() behind this thread's own hold, and the unlock hands it over.
  const asyncHandoff = async () => {
    const m = new Mutex();
    const end = performance.now() + durationMs;
    let ops = 0;
    while (performance.now() < end) {
      const held = m.lock();
      const waiting = m.lockAsync();
      held.unlock();
      (await waiting).unlock();
      ops += 1;
    }
    return Math.round(ops / (durationMs / 1000));
  };

  (async () => {
    const mutex = await run('mutex', new Mutex());
    const semaphore = await run('semaphore', new Semaphore(1));
    const handoff = await asyncHandoff();
    console.log(JSON.stringify({ lib: libDir, mutex, semaphore, ...slowCalls(), asyncHandoff: handoff }));
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
