'use strict';
// Workers and the main thread move money between shared accounts, first without a lock and then
// under a parklock Mutex. Every transfer keeps the total constant and is counted in a shared
// counter, so lost updates show up as a wrong total and a wrong count.
//
// Each transfer reads the balances, pauses for a millisecond (standing in for real work between
// reading and writing), then writes them back. All threads start together at a Barrier, so
// without a lock their read-pause-write windows overlap from the first transfer on and updates
// are lost in every run, not just in an unlucky one.
//
//   npm run demo
const { setTimeout: sleepAsync } = require('node:timers/promises');
const { Worker, isMainThread, workerData } = require('node:worker_threads');
const { Barrier, Mutex } = require('..');

const ACCOUNTS = 4;
const INITIAL = 1000;
const WORKERS = 3;
const TRANSFERS = 40; // per thread, the main thread included
const PAUSE_MS = 1;

function openLedger(memory) {
  return {
    balances: new Int32Array(memory, 0, ACCOUNTS),
    transfers: new Int32Array(memory, ACCOUNTS * 4, 1),
  };
}

// Which accounts and how much: different in every thread and step, never from == to.
function pick(thread, step) {
  const from = (thread + step) % ACCOUNTS;
  const to = (from + 1 + (step % (ACCOUNTS - 1))) % ACCOUNTS;
  return { from, to, amount: 1 + ((thread * 7 + step) % 10) };
}

// Read-modify-write of plain shared memory with a pause in the middle: correct only when no
// other thread runs the same code meanwhile.
function read(ledger, { from, to }) {
  return [ledger.balances[from], ledger.balances[to], ledger.transfers[0]];
}
function write(ledger, { from, to, amount }, [fromBalance, toBalance, count]) {
  ledger.balances[from] = fromBalance - amount;
  ledger.balances[to] = toBalance + amount;
  ledger.transfers[0] = count + 1;
}

const pause = new Int32Array(new SharedArrayBuffer(4));

if (!isMainThread) {
  // A worker blocks: in the pause (Atomics.wait) and on the lock.
  const { memory, start, mutex, thread } = workerData;
  const ledger = openLedger(memory);
  const lock = mutex && new Mutex(mutex);
  new Barrier(start).wait();
  for (let step = 0; step < TRANSFERS; step++) {
    const t = pick(thread, step);
    const guard = lock && lock.lock();
    const seen = read(ledger, t);
    Atomics.wait(pause, 0, 0, PAUSE_MS);
    write(ledger, t, seen);
    if (guard) guard.unlock();
  }
} else {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}

// The main thread never blocks: it pauses with a timer and takes the lock with a Promise.
async function mainThreadTransfers(ledger, mutex) {
  for (let step = 0; step < TRANSFERS; step++) {
    const t = pick(WORKERS, step);
    const transfer = async () => {
      const seen = read(ledger, t);
      await sleepAsync(PAUSE_MS);
      write(ledger, t, seen);
    };
    await (mutex ? mutex.executeLocked(transfer) : transfer());
  }
}

async function run(withLock) {
  const memory = new SharedArrayBuffer((ACCOUNTS + 1) * 4);
  const ledger = openLedger(memory);
  ledger.balances.fill(INITIAL);
  const mutex = withLock ? new Mutex() : null;
  const start = new Barrier(WORKERS + 1);
  const started = performance.now();
  const workers = Array.from({ length: WORKERS }, (_, thread) => {
    const worker = new Worker(__filename, { workerData: { memory, start, mutex, thread } });
    return new Promise((resolve, reject) => {
      worker.once('exit', resolve);
      worker.once('error', reject);
    });
  });
  await start.waitAsync();
  await mainThreadTransfers(ledger, mutex);
  await Promise.all(workers);
  const total = ledger.balances.reduce((sum, balance) => sum + balance, 0);
  return {
    withLock,
    total,
    expectedTotal: ACCOUNTS * INITIAL,
    transfers: ledger.transfers[0],
    expectedTransfers: (WORKERS + 1) * TRANSFERS,
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
  console.log(
    `${WORKERS} workers (blocking) + the main thread (async), ${TRANSFERS} transfers each; ` +
      `every transfer reads, pauses ${PAUSE_MS} ms, writes\n`,
  );
  report(await run(false));
  if (!report(await run(true))) process.exitCode = 1;
}
