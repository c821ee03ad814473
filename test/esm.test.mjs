// The ESM entry point: named and default exports, and the package's own "exports" map.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import parklock, { Mutex, AsyncLock, TimeoutError, layouts } from '../lib/index.mjs';

const require = createRequire(import.meta.url);

describe('ESM entry (lib/index.mjs)', () => {
  it('exports Mutex, and AsyncLock as the same class', () => {
    assert.equal(typeof Mutex, 'function');
    assert.equal(AsyncLock, Mutex);
    assert.equal(typeof TimeoutError, 'function');
    assert.equal(layouts.mutex.BYTES, Mutex.BYTES);
  });

  it('exports the very objects the CommonJS entry does, also as the default export', () => {
    const cjs = require('../lib/index.js');
    assert.equal(parklock, cjs);
    assert.equal(Mutex, cjs.Mutex);
    assert.equal(AsyncLock, cjs.AsyncLock);
    assert.equal(TimeoutError, cjs.TimeoutError);
    assert.equal(layouts, cjs.layouts);
  });

  it('names every export of the CommonJS entry', async () => {
    const cjs = require('../lib/index.js');
    const esm = await import('../lib/index.mjs');
    for (const name of Object.keys(cjs)) assert.equal(esm[name], cjs[name], name);
  });

  it('the package name resolves to the same module from import and require', async () => {
    const imported = await import('parklock');
    assert.equal(imported.Mutex, Mutex);
    assert.equal(imported.AsyncLock, Mutex);
    assert.equal(imported.default, parklock);
    assert.equal(require('parklock').Mutex, Mutex);
  });

  it('a Mutex from the ESM entry works, synchronously and asynchronously', async () => {
    const m = new AsyncLock();
    const word = new Int32Array(m.buffer, m.byteOffset, 1);
    const guard = m.lock();
    assert.equal(m.isHeldByCurrentThread, true);
    await assert.rejects(m.lockAsync({ timeout: 1 }), TimeoutError);
    guard.unlock();
    assert.equal(await m.executeLocked(() => 'ok'), 'ok');
    assert.equal(Atomics.load(word, 0), 0);
  });

  it('is the same lock as a Mutex built in a worker from the CommonJS entry', async () => {
    const m = new Mutex();
    m.lock();
    const worker = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       const { Mutex } = require(workerData.entry);
       const m = new Mutex(workerData.mutex);
       parentPort.postMessage([m.isLocked, m.isHeldByCurrentThread, m.tryLock()]);`,
      { eval: true, workerData: { mutex: m, entry: require.resolve('../lib/index.js') } },
    );
    const [message] = await Promise.all([
      new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      }),
      new Promise((resolve) => worker.once('exit', resolve)),
    ]);
    assert.deepEqual(message, [true, false, false]);
    m.unlock();
    assert.equal(Atomics.load(new Int32Array(m.buffer, m.byteOffset, 1), 0), 0);
  });
});
