'use strict';
// Run inside a consumer app that installed the packed tarball: the main thread and two workers
// increment one plain shared counter under one Mutex. Prints which binary was loaded.
const { Worker, isMainThread, workerData, parentPort } = require('node:worker_threads');
const { Mutex } = require('parklock');

const ROUNDS = 2000;

if (isMainThread) {
  const mutex = new Mutex();
  const counter = new Int32Array(new SharedArrayBuffer(4));
  const done = [1, 2].map(
    () =>
      new Promise((resolve, reject) => {
        const worker = new Worker(__filename, { workerData: { mutex, counter } });
        worker.once('message', resolve);
        worker.once('error', reject);
      }),
  );
  (async () => {
    for (let i = 0; i < ROUNDS; i++) await mutex.executeLocked(() => counter[0]++);
    const binaries = await Promise.all(done);
    if (counter[0] !== 3 * ROUNDS) throw new Error(`counter ${counter[0]}, expected ${3 * ROUNDS}`);
    console.log(`cjs ok: counter ${counter[0]}; main loaded ${loadedBinary()}; workers ${binaries}`);
  })().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
} else {
  const mutex = new Mutex(workerData.mutex);
  const counter = new Int32Array(workerData.counter.buffer);
  for (let i = 0; i < ROUNDS; i++) {
    const guard = mutex.lock();
    counter[0]++;
    guard.unlock();
  }
  parentPort.postMessage(loadedBinary());
}

function loadedBinary() {
  return Object.keys(require.cache).find((file) => file.endsWith('.node'));
}
