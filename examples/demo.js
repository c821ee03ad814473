'use strict';
// Workers and the main thread move money between shared accounts, first without a lock and then
// under a parklock Mutex. Every transfer keeps the total constant, and every thread counts its
// transfers in a shared counter, so lost updates show up as a wrong total and a wrong count.
//
//   npm run demo
const { Worker, isMainThread, workerData, parentPort } = require('node:worker_threads');
const { Mutex } = require('..');

const ACCOUNTS = 8;
const INITIAL = 1000;
const WORKERS = 3;
const TRANSFERS = 200000;
const MAIN_TRANSFERS = 20000;

function transfer(ledger, random) {
  const from = Math.floor(random() * ACCOUNTS);
  const to = (from + 1 + Math.floor(random() * (ACCOUNTS - 1))) % ACCOUNTS;
  const amount = 1 + Math.floor(random() * 10);
  // Read-modify-write of plain (non-atomic) shared memory: correct only under mutual exclusion.
  ledger.balances[from] -= amount;
  ledger.balances[to] += amount;
  ledger.transfers[0] += 1;
}

function randomFrom(seed) {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x100000000;
  };
}

function openLedger(memory) {
  return {
    balances: new Int32Array(memory, 0, ACCOUNTS),
    transfers: new Int32Array(memory, ACCOUNTS * 4, 1),
  };
}

if (!isMainThread) {
  const { memory, mutex, seed } = workerData;
  const ledger = openLedger(memory);
  const lock = mutex ? new Mutex(mutex) : null;
  const random = randomFrom(seed);
  for (let i = 0; i < TRANSFERS; i++) {
    if (lock) lock.lock();
    transfer(ledger, random);
    if (lock) lock.unlock();
  }
  parentPort.postMessage('done');
} else {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}

async function run(withLock) {
  const memory = new SharedArrayBuffer((ACCOUNTS + 1) * 4);
  const ledger = openLedger(memory);
  ledger.balances.fill(INITIAL);
  const mutex = withLock ? new Mutex() : null;
  const started = performance.now();
  const workers = Array.from({ length: WORKERS }, (_, i) => {
    const worker = new Worker(__filename, { workerData: { memory, mutex, seed: i + 1 } });
    return new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  });
  // The main thread joins in asynchronously, so its event loop stays responsive meanwhile.
  const random = randomFrom(99);
  for (let i = 0; i < MAIN_TRANSFERS; i++) {
    if (mutex) {
      await mutex.executeLocked(() => transfer(ledger, random));
    } else {
      transfer(ledger, random);
      if (i % 1000 === 0) await new Promise(setImmediate);
    }
  }
  await Promise.all(workers);
  const total = ledger.balances.reduce((sum, balance) => sum + balance, 0);
  return {
    withLock,
    total,
    expectedTotal: ACCOUNTS * INITIAL,
    transfers: ledger.transfers[0],
    expectedTransfers: WORKERS * TRANSFERS + MAIN_TRANSFERS,
    ms: Math.round(performance.now() - started),
  };
}

function report(r) {
  const ok = r.total === r.expectedTotal && r.transfers === r.expectedTransfers;
  console.log(
    `${r.withLock ? 'with a Mutex   ' : 'without a lock '} total ${r.total} (expected ${r.expectedTotal}), ` +
      `transfers ${r.transfers} (expected ${r.expectedTransfers}), ${r.ms} ms: ${ok ? 'consistent' : 'CORRUPTED'}`,
  );
  return ok;
}

async function main() {
  console.log(`${WORKERS} workers x ${TRANSFERS} transfers + main thread x ${MAIN_TRANSFERS} (async)\n`);
  report(await run(false));
  if (!report(await run(true))) process.exitCode = 1;
}
