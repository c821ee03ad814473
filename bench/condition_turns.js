'use strict';
// Two parties taking turns through one Mutex and one Condition (wait until it is my turn, pass
// the turn, notifyOne): the round-trip time between two processes over sharedMemory(), against
// the same between two worker threads over a SharedArrayBuffer, alternating in one run.
//
//   node bench/condition_turns.js [--rounds N] [--reps R]
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const { fork } = require('node:child_process');
const { Worker, isMainThread, workerData } = require('node:worker_threads');
const { sharedMemory, Mutex, Condition } = require('..');
const { walkArgv, checkPositiveInteger } = require('./support/argv');

const USAGE = 'usage: node bench/condition_turns.js [--rounds N] [--reps R]';
const MUTEX = 0;
const CONDITION = 64;
const TURN = 128;
const BYTES = 192;

// Takes `rounds` turns; returns the times (hrtime) at which this party had the turn back at the
// start of its second round and of its last.
function takeTurns(memory, me, rounds) {
  const mutex = new Mutex(memory, MUTEX);
  const condition = new Condition(memory, CONDITION);
  const turn = new Int32Array(memory instanceof SharedArrayBuffer ? memory : memory.buffer, TURN, 1);
  const times = [];
  for (let i = 0; i < rounds; i++) {
    mutex.lock();
    while (Atomics.load(turn, 0) !== me) condition.wait(mutex);
    if (i === 1 || i === rounds - 1) times.push(process.hrtime.bigint());
    Atomics.store(turn, 0, 1 - me);
    condition.notifyOne();
    mutex.unlock();
  }
  return times;
}

// Microseconds per round trip, this thread playing party 0 against `start(rounds)`'s party 1.
// Timed from the first turn the other party passed back, so that its start-up is not counted:
// `rounds` round trips lie between the second round and the last of rounds + 2.
async function measure(memory, rounds, start) {
  const other = start(rounds + 2);
  const [first, last] = takeTurns(memory, 0, rounds + 2);
  await new Promise((resolve) => other.once('exit', resolve));
  return Number(last - first) / 1000 / rounds;
}

function acrossProcesses(rounds) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'parklock-turns-')), 'region');
  const memory = sharedMemory(file, { size: BYTES });
  return measure(memory, rounds, (n) => fork(__filename, ['--child', file, String(n)])).finally(() =>
    fs.rmSync(path.dirname(file), { recursive: true, force: true }),
  );
}

function acrossThreads(rounds) {
  const memory = new SharedArrayBuffer(BYTES);
  return measure(memory, rounds, (n) => new Worker(__filename, { workerData: { memory, rounds: n } }));
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const spread = (values) => `${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)}`;

async function main() {
  let rounds = 20_000;
  let reps = 5;
  walkArgv(process.argv.slice(2), USAGE, (arg, value) => {
    if (arg === '--rounds') rounds = Number(value());
    else if (arg === '--reps') reps = Number(value());
    else return false;
    return true;
  });
  checkPositiveInteger('--rounds', rounds);
  checkPositiveInteger('--reps', reps);
  const processes = [];
  const threads = [];
  for (let rep = 0; rep < reps; rep++) {
    processes.push(await acrossProcesses(rounds));
    threads.push(await acrossThreads(rounds));
  }
  console.log(`${rounds} round trips x ${reps}, microseconds per round trip, median (min-max):`);
  console.log(`  two processes, sharedMemory():      ${median(processes).toFixed(1)} (${spread(processes)})`);
  console.log(`  two worker threads, SharedArrayBuffer: ${median(threads).toFixed(1)} (${spread(threads)})`);
  console.log(`  ratio: ${(median(processes) / median(threads)).toFixed(2)}x`);
}

if (!isMainThread) {
  takeTurns(workerData.memory, 1, workerData.rounds);
} else if (process.argv[2] === '--child') {
  takeTurns(sharedMemory(process.argv[3], { create: false }), 1, Number(process.argv[4]));
} else {
  main().catch((error) => {
    console.error(error.message);
    process.exitCode = 1;
  });
}
