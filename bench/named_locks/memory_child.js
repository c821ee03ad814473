'use strict';
// The memory case of bench/named_locks.js, in a process of its own started with --expose-gc so
// that nothing else the run did is in its resident set: `count` distinct names, each requested,
// held for its callback and released before the next. Prints one JSON line: the growth of the
// RSS across them (after a full GC on both sides), the time they took, and what query() finds
// left over.
const { locks } = require('../../lib');

const [impl, count] = [process.argv[2], Number(process.argv[3])];
const manager = impl === 'node' ? require('node:worker_threads').locks : locks;
const nothing = () => {};

async function settledRss() {
  // Twice, a turn apart: the first collection's finalizers may free more for the second.
  global.gc();
  await new Promise((resolve) => setImmediate(resolve));
  global.gc();
  return process.memoryUsage().rss;
}

async function main() {
  // One name before the baseline reading: the table and the code paths exist by then.
  await manager.request('warm-up', nothing);
  const before = await settledRss();
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await manager.request(`name-${i}`, nothing);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const after = await settledRss();
  const left = await manager.query();
  console.log(JSON.stringify({
    rssGrowthMB: (after - before) / 2 ** 20,
    nsPerName: (ms * 1e6) / count,
    leftOver: left.held.length + left.pending.length,
  }));
}

main().catch((error) => {
  console.error(error.stack);
  process.exitCode = 1;
});
