'use strict';
// Starting a group of worker_threads for one measurement, and finding out how each one ended.
//
// A worker ends well only by posting { type: 'done', ... } and then exiting. Anything else is a
// failure with a reason: it threw, it exited without 'done' (what a V8-blog async worker does
// when its only pending work is an Atomics.waitAsync), or the group overran its time limit, in
// which case every worker is terminated. A measurement therefore never hangs.
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { CONTROL } = require('./control');

const WORKERS_DIR = path.join(__dirname, '..', 'workers');
const TERMINATE_GRACE_MS = 5_000;

// Starts one worker per entry of `workerDatas` running bench/workers/<script>.js.
// Returns { results, problems, finished, terminate, workers }: `results[i]` is worker i's 'done'
// message, `problems` the failure reasons so far, `finished` resolves once every worker exited.
function startWorkers(script, workerDatas, { timeLimitMs, onMessage } = {}) {
  const file = path.join(WORKERS_DIR, `${script}.js`);
  const results = new Array(workerDatas.length);
  const problems = [];
  let timedOut = false;
  let remaining = workerDatas.length;
  let resolveFinished;
  const finished = new Promise((resolve) => {
    resolveFinished = resolve;
  });

  const workers = workerDatas.map((workerData, i) => {
    const worker = new Worker(file, { workerData });
    worker.on('message', (message) => {
      if (message && message.type === 'done') results[i] = message;
      else if (message && message.type === 'failed') problems.push(`worker ${i}: ${message.reason}`);
      if (onMessage) onMessage(i, message);
    });
    worker.on('error', (error) => problems.push(`worker ${i} threw: ${error.message}`));
    worker.on('exit', (code) => {
      if (results[i] === undefined && !timedOut) {
        problems.push(`worker ${i} exited (code ${code}) without reporting done`);
      }
      if (--remaining === 0) {
        clearTimeout(timer);
        resolveFinished();
      }
    });
    return worker;
  });

  const terminate = () => workers.forEach((worker) => worker.terminate());
  const timer = setTimeout(() => {
    timedOut = true;
    const stuck = workers.length - results.filter((r) => r !== undefined).length;
    problems.push(`timed out after ${timeLimitMs} ms (${stuck} of ${workers.length} workers unfinished)`);
    // terminate() interrupts workers blocked in Atomics.wait or in parklock's sync waits, but
    // not every blocking wait (V8's Atomics.Mutex.lock is not interruptible): if workers are
    // still there after a grace period, give up on them so that the measurement ends anyway.
    terminate();
    setTimeout(() => {
      if (remaining === 0) return;
      problems.push(`${remaining} worker(s) still running ${TERMINATE_GRACE_MS} ms after terminate() ` +
        '(blocked in a wait that terminate() cannot interrupt)');
      resolveFinished();
    }, TERMINATE_GRACE_MS).unref();
  }, timeLimitMs);

  return { workers, results, problems, finished, terminate };
}

// Resolves once `predicate()` holds, polling every millisecond; rejects with the group's first
// problem if one appears, or after `timeoutMs`. For the coordinating thread, which must keep its
// event loop turning to hear about worker failures.
async function until(predicate, group, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (group.problems.length > 0) throw new Error(group.problems.join('; '));
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

// Waits until `count` workers sit at the start gate, then opens it; returns the hrtime at which
// it opened.
async function openGateWhenReady(ctl, count, group, timeoutMs = 30_000) {
  await until(() => Atomics.load(ctl, CONTROL.READY) >= count, group, timeoutMs, 'workers to start');
  const openedAt = process.hrtime.bigint();
  Atomics.store(ctl, CONTROL.GO, 1);
  Atomics.notify(ctl, CONTROL.GO);
  return openedAt;
}

// Stops the workers (STOP flag) and waits for all of them to exit; throws with every problem if
// any worker failed, so that a measurement is either complete or a failure, never a number
// computed from a partial run.
async function stopAndCollect(ctl, group) {
  Atomics.store(ctl, CONTROL.STOP, 1);
  await group.finished;
  if (group.problems.length > 0) throw new Error(group.problems.join('; '));
  return group.results;
}

module.exports = { startWorkers, until, openGateWhenReady, stopAndCollect };
