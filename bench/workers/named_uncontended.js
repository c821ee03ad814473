'use strict';
// One uncontended measurement on a fresh thread (bench/named_locks.js, "uncontended" cases): the
// time per acquire-and-release of `op` over its first `burst` calls (cold: nothing compiled
// yet), then, after `warmup` more, over `steady` calls. The name is this thread's alone.
const { workerData, threadId } = require('node:worker_threads');
const { locks, Mutex } = require('../../lib');
const { reportDone, runWorker } = require('./common');

const name = `uncontended-${threadId}`;
const mutex = new Mutex();
const nothing = () => {};

// Each op resolves (or returns) once it has acquired and released.
const OPS = {
  request: () => locks.request(name, nothing),
  executeLocked: () => mutex.executeLocked(nothing),
  lock: () => locks.lock(name).unlock(),
  'mutex-lock': () => {
    mutex.lock();
    mutex.unlock();
  },
};

async function timeNs(op, count, awaited) {
  const start = process.hrtime.bigint();
  if (awaited) for (let i = 0; i < count; i++) await op();
  else for (let i = 0; i < count; i++) op();
  return Number(process.hrtime.bigint() - start);
}

runWorker(async () => {
  const { op, burst, warmup, steady } = workerData;
  const awaited = op === 'request' || op === 'executeLocked';
  const burstNs = await timeNs(OPS[op], burst, awaited);
  await timeNs(OPS[op], warmup, awaited);
  const steadyNs = await timeNs(OPS[op], steady, awaited);
  reportDone({ burstNsPerOp: burstNs / burst, steadyNsPerOp: steadyNs / steady });
});
