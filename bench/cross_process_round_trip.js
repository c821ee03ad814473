'use strict';
// Round trips between two processes through two Semaphores in one sharedMemory() region: each
// side's acquire blocks until the other's release reaches it across processes, so a round trip
// is two cross-process wake-ups. It runs wherever Node does, Windows (or Wine) included, where
// bench/cross_process.js's flock(2) baselines do not: it measures parklock alone, and compares
// mechanisms or builds run alternately (PARKLOCK_CROSS_PROCESS, PARKLOCK_NATIVE_PATH).
//   node bench/cross_process_round_trip.js [ROUNDS]      (default 4000; prints one JSON line)
const { fork } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { sharedMemory, Semaphore } = require('../lib');
const native = require('../lib/native');

const [role, file] = process.argv.slice(2);

function parent(rounds) {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'parklock-round-trip-'));
  const where = path.join(directory, 'region');
  const memory = sharedMemory(where, { size: 64 });
  const ping = Semaphore.init(memory, 0, 0);
  const pong = Semaphore.init(memory, 8, 0);
  const child = fork(__filename, ['child', where]);
  child.once('message', () => {
    const micros = [];
    for (let i = 0; i < rounds; i++) {
      const started = process.hrtime.bigint();
      ping.release();
      pong.acquire();
      micros.push(Number(process.hrtime.bigint() - started) / 1000);
    }
    micros.sort((a, b) => a - b);
    const at = (q) => Number(micros[Math.floor(q * (micros.length - 1))].toFixed(1));
    const mechanism = native.crossProcessMechanism;
    console.log(JSON.stringify({ platform: process.platform, mechanism, rounds, median_us: at(0.5), p90_us: at(0.9), p99_us: at(0.99) }));
    child.kill();
    // Windows removes no file that a process maps: there it stays in the temporary directory.
    if (process.platform !== 'win32') fs.rmSync(directory, { recursive: true, force: true });
  });
}

function childProcess() {
  const memory = sharedMemory(file);
  const ping = new Semaphore(memory, 0);
  const pong = new Semaphore(memory, 8);
  process.send('ready');
  for (;;) {
    ping.acquire();
    pong.release();
  }
}

if (role === 'child') childProcess();
else parent(Number(role ?? 4000));
