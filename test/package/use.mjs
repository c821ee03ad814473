// The ESM side of use.cjs: named and default imports, a worker that is an ES module too.
import { Worker, isMainThread, workerData, parentPort } from 'node:worker_threads';
import parklock, { Mutex, Semaphore } from 'parklock';

const ROUNDS = 2000;

if (parklock.Mutex !== Mutex) throw new Error('default and named exports differ');

if (isMainThread) {
  const mutex = new Mutex();
  const started = new Semaphore(0);
  const counter = new Int32Array(new SharedArrayBuffer(4));
  const done = [1, 2].map(
    () =>
      new Promise((resolve, reject) => {
        const worker = new Worker(new URL(import.meta.url), {
          workerData: { mutex, started, counter },
        });
        worker.once('exit', resolve);
        worker.once('error', reject);
      }),
  );
  await started.acquireAsync(2);
  for (let i = 0; i < ROUNDS; i++) await mutex.executeLocked(() => counter[0]++);
  await Promise.all(done);
  if (counter[0] !== 3 * ROUNDS) throw new Error(`counter ${counter[0]}, expected ${3 * ROUNDS}`);
  console.log(`esm ok: counter ${counter[0]}`);
} else {
  const mutex = new Mutex(workerData.mutex);
  const counter = new Int32Array(workerData.counter.buffer);
  new Semaphore(workerData.started).release();
  for (let i = 0; i < ROUNDS; i++) {
    const guard = await mutex.lockAsync();
    counter[0]++;
    guard.unlock();
  }
  parentPort.close();
}
