'use strict';
// PostgresLockManager on one PostgreSQL server, in one run:
//
//   throughput   4 processes acquire and release in a loop for --ms, all on one name, then each on
//                a name of its own: parklock's request() against the advisory-lock package
//                (withLock(), which opens a connection per acquisition: its design, measured as
//                it ships). Acquisitions per second of the 4 together.
//   owner death  a process holds a name, this one waits for it, the holder is SIGKILLed: the time
//                from the kill to this process's grant, --kills times.
//
// The server: PARKLOCK_PG_URL, else a throwaway cluster (test/postgres/cluster.js), fsync off.
//   node bench/postgres_locks.js [--ms N] [--kills N]
const os = require('node:os');
const path = require('node:path');
const { fork } = require('node:child_process');
const { once } = require('node:events');
const { PostgresLockManager } = require('../lib');
const { startServer, urlOf } = require('../test/postgres/cluster');

const AGENT = path.join(__dirname, 'postgres', 'agent.js');
const PROCESSES = 4;

function parseArgs(argv) {
  const options = { ms: 3000, kills: 5 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = { '--ms': 'ms', '--kills': 'kills' }[argv[i]];
    const value = Number(argv[i + 1]);
    if (key === undefined || !Number.isInteger(value) || value <= 0) {
      throw new Error('usage: node bench/postgres_locks.js [--ms N] [--kills N]');
    }
    options[key] = value;
  }
  return options;
}

async function throughput(server, impl, sameName, ms) {
  const children = Array.from({ length: PROCESSES }, (_, i) =>
    fork(AGENT, [JSON.stringify({ impl, config: server.config, url: urlOf(server.config), name: sameName ? 'bench' : `bench-${i}`, ms })]),
  );
  await Promise.all(children.map((child) => once(child, 'message')));
  const counts = children.map((child) => once(child, 'message').then(([message]) => message.count));
  for (const child of children) child.send('go');
  const total = (await Promise.all(counts)).reduce((a, b) => a + b, 0);
  await Promise.all(children.map((child) => (child.exitCode === null ? once(child, 'exit') : null)));
  return total / (ms / 1000);
}

async function killToGrant(server, runs) {
  const manager = new PostgresLockManager(server.config);
  const times = [];
  for (let run = 0; run < runs; run += 1) {
    const holder = fork(AGENT, [JSON.stringify({ kind: 'hold', config: server.config, name: 'killed' })]);
    await once(holder, 'message');
    let killed;
    const granted = manager.request('killed', (lock) => {
      if (!lock.ownerDied) throw new Error('the next holder was not told of the death');
      return performance.now() - killed;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    killed = performance.now();
    holder.kill('SIGKILL');
    times.push(await granted);
  }
  await manager.end();
  return times.sort((a, b) => a - b);
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const server = startServer();
  if (server.skip || server.failure) throw new Error(`no PostgreSQL server: ${server.skip ?? server.failure}`);
  try {
    const rows = [];
    for (const sameName of [true, false]) {
      for (const impl of ['parklock', 'advisory-lock']) {
        const rate = await throughput(server, impl, sameName, options.ms);
        rows.push(`| ${sameName ? 'one name' : 'a name each'} | ${impl} | ${Math.round(rate).toLocaleString('en-US')} |`);
      }
    }
    const kills = await killToGrant(server, options.kills);
    const median = kills[Math.floor(kills.length / 2)];
    console.log(`node bench/postgres_locks.js ${process.argv.slice(2).join(' ')}`.trim());
    console.log(`${new Date().toISOString()}, Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), PostgreSQL on ${server.cluster ? 'a local Unix socket, fsync off' : 'PARKLOCK_PG_URL'}\n`);
    console.log(`| ${PROCESSES} processes | implementation | acquisitions/s |\n| --- | --- | --- |\n${rows.join('\n')}\n`);
    console.log(`SIGKILL of the holder -> next grant, ${options.kills} runs: median ${median.toFixed(1)} ms (${kills.map((t) => t.toFixed(1)).join(', ')})`);
  } finally {
    server.cluster?.stop();
  }
}

main().catch((error) => {
  console.error(error.stack);
  process.exitCode = 1;
});
