'use strict';
// Self-check of the baselines: for each one, two worker_threads each increment a shared counter
// 100,000 times under the lock, and the final count must be exactly 200,000.
//
// The increment is a plain (non-atomic) read and write of an Int32Array element, so a lock that
// fails to exclude the other thread loses increments and the count comes out short.
//
// The run never hangs: a worker that exits without reporting 'done' is a failure (this is what
// the V8-blog async form is expected to do, because a pending Atomics.waitAsync does not keep a
// worker's event loop alive), and a case that takes longer than CASE_TIMEOUT_MS is terminated
// and reported as a failure.
//
// Usage: node bench/baselines/selfcheck.js
//        node --harmony-struct bench/baselines/selfcheck.js   (to include V8's Atomics.Mutex)
// Exit status 1 if any case fails other than the ones marked as expected failures.

const { Worker, isMainThread, workerData, parentPort } = require('node:worker_threads');
const { DrepperMutex } = require('./drepper_mutex');
const { V8BlogAsyncLock } = require('./v8_blog_async_lock');
const { V8AtomicsMutex, isAvailable: atomicsMutexAvailable } = require('./v8_atomics_mutex');

const WORKERS = 2;
const ITERATIONS = 100_000;
const CASE_TIMEOUT_MS = 30_000;

// Shared memory of one case: the counter, the start gate, then the lock word at a non-zero
// offset so that the byteOffset handling of the baselines is exercised too.
const COUNTER_OFFSET = 0;
const GATE_OFFSET = 4;
const LOCK_OFFSET = 8;
const SAB_BYTES = 16;

const CASES = [
  { kind: 'drepper-sync', title: 'DrepperMutex lock()/unlock()' },
  { kind: 'blog-sync', title: 'V8BlogAsyncLock lock()/unlock()' },
  {
    kind: 'blog-async',
    title: 'V8BlogAsyncLock executeLocked() (async)',
    expectedFailure: 'a pending Atomics.waitAsync does not keep a worker alive',
  },
  {
    kind: 'v8-atomics-mutex',
    title: 'V8 Atomics.Mutex.lock()',
    unavailable: () => (atomicsMutexAvailable() ? null : 'needs node --harmony-struct'),
  },
];

// ---- worker side ---------------------------------------------------------------------------

// Holds each worker until all have started. Without it the first worker can finish its loop
// (a few milliseconds) before the second one has even loaded, and a broken lock would pass.
function startTogether(sab) {
  const gate = new Int32Array(sab, GATE_OFFSET, 1);
  if (Atomics.add(gate, 0, 1) + 1 === WORKERS) {
    Atomics.notify(gate, 0);
    return;
  }
  for (let arrived; (arrived = Atomics.load(gate, 0)) < WORKERS; ) Atomics.wait(gate, 0, arrived);
}

async function workerMain({ kind, sab, handle, iterations }) {
  const counter = new Int32Array(sab, COUNTER_OFFSET, 1);
  const increment = () => {
    counter[0] = counter[0] + 1;
  };
  startTogether(sab);
  switch (kind) {
    case 'drepper-sync': {
      const mutex = new DrepperMutex(sab, LOCK_OFFSET);
      for (let i = 0; i < iterations; i++) {
        mutex.lock();
        increment();
        mutex.unlock();
      }
      break;
    }
    case 'blog-sync': {
      const lock = new V8BlogAsyncLock(sab, LOCK_OFFSET);
      for (let i = 0; i < iterations; i++) {
        lock.lock();
        increment();
        lock.unlock();
      }
      break;
    }
    case 'blog-async': {
      const lock = new V8BlogAsyncLock(sab, LOCK_OFFSET);
      for (let i = 0; i < iterations; i++) await lock.executeLocked(increment);
      break;
    }
    case 'v8-atomics-mutex': {
      const mutex = V8AtomicsMutex.fromHandle(handle);
      for (let i = 0; i < iterations; i++) mutex.runLocked(increment);
      break;
    }
    default:
      throw new Error(`unknown case ${kind}`);
  }
  parentPort.postMessage('done');
}

// ---- main side -----------------------------------------------------------------------------

// Resolves with how one worker ended; never rejects.
function watchWorker(worker) {
  return new Promise((resolve) => {
    let done = false;
    let error = null;
    worker.on('message', (message) => {
      if (message === 'done') done = true;
    });
    worker.on('error', (err) => {
      error = err;
    });
    worker.on('exit', (exitCode) => resolve({ done, error, exitCode }));
  });
}

async function runCase({ kind }) {
  const sab = new SharedArrayBuffer(SAB_BYTES);
  // Only Atomics.Mutex needs something besides the buffer: the shared mutex object itself.
  const handle = kind === 'v8-atomics-mutex' ? V8AtomicsMutex.create().handle : undefined;
  const started = process.hrtime.bigint();
  const workers = [];
  for (let i = 0; i < WORKERS; i++) {
    workers.push(
      new Worker(__filename, { workerData: { kind, sab, handle, iterations: ITERATIONS } }));
  }

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    // terminate() also interrupts a worker blocked in Atomics.wait.
    for (const worker of workers) worker.terminate();
  }, CASE_TIMEOUT_MS);
  const endings = await Promise.all(workers.map(watchWorker));
  clearTimeout(timer);
  const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;

  const count = new Int32Array(sab, COUNTER_OFFSET, 1)[0];
  const expected = WORKERS * ITERATIONS;
  const problems = [];
  if (timedOut) problems.push(`timed out after ${CASE_TIMEOUT_MS} ms`);
  endings.forEach(({ done, error, exitCode }, i) => {
    if (error) problems.push(`worker ${i} threw: ${error.message}`);
    else if (!done && !timedOut) {
      problems.push(`worker ${i} exited (code ${exitCode}) without finishing`);
    }
  });
  if (count !== expected) problems.push(`count ${count}, expected ${expected}`);
  return { ok: problems.length === 0, problems, elapsedMs };
}

async function main() {
  let unexpectedFailures = 0;
  for (const testCase of CASES) {
    const reason = testCase.unavailable && testCase.unavailable();
    if (reason) {
      console.log(`SKIP  ${testCase.title}: ${reason}`);
      continue;
    }
    const { ok, problems, elapsedMs } = await runCase(testCase);
    const time = `${elapsedMs.toFixed(0)} ms`;
    if (ok && testCase.expectedFailure) {
      console.log(`PASS  ${testCase.title} (${time}; expected failure did not occur this run: ` +
                  `${testCase.expectedFailure})`);
    } else if (ok) {
      console.log(`PASS  ${testCase.title} (${time})`);
    } else if (testCase.expectedFailure) {
      console.log(`FAIL  ${testCase.title} (${time}; expected: ${testCase.expectedFailure}): ` +
                  problems.join('; '));
    } else {
      unexpectedFailures++;
      console.log(`FAIL  ${testCase.title} (${time}): ${problems.join('; ')}`);
    }
  }
  process.exitCode = unexpectedFailures === 0 ? 0 : 1;
}

if (isMainThread) {
  main();
} else {
  workerMain(workerData);
}
