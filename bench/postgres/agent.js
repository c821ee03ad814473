'use strict';
// One process of bench/postgres_locks.js: acquires and releases a name in a loop with one of the
// implementations, from the parent's 'go' until `ms` have passed, and reports how many times.
// Or (kind 'hold') holds a name until it is killed.
const { PostgresLockManager } = require('../../lib');

const task = JSON.parse(process.argv[2]);

function implementation() {
  if (task.impl === 'parklock') {
    const manager = new PostgresLockManager(task.config, { heartbeatMs: Infinity });
    return { acquireRelease: () => manager.request(task.name, () => {}), end: () => manager.end() };
  }
  const mutex = require('advisory-lock').default(task.url)(task.name);
  return { acquireRelease: () => mutex.withLock(async () => {}), end: async () => {} };
}

async function loop() {
  const { acquireRelease, end } = implementation();
  await acquireRelease();
  process.send({ ready: true });
  await new Promise((resolve) => process.once('message', resolve));
  const until = performance.now() + task.ms;
  let count = 0;
  while (performance.now() < until) {
    await acquireRelease();
    count += 1;
  }
  await end();
  process.send({ count });
}

async function hold() {
  const manager = new PostgresLockManager(task.config);
  await manager.request(task.name, () => {
    process.send({ held: true });
    return new Promise(() => setInterval(() => {}, 1 << 30));
  });
}

(task.kind === 'hold' ? hold : loop)();
