'use strict';
// The memory case of bench/named_locks.js, in a process of its own started with --expose-gc so
// that nothing else the run did is in its resident set: `count` distinct names, each requested,
// held for its callback and released before the next. Prints one JSON line: the growth of the
// RSS across them (after a full GC on both sides) from a cold start, where one name alone came
// first, and again across another `count` names right after, once V8 has sized its heap and
// compiled the loop; in the cold pass, the growth of the JS heap V8 reserves (heapTotal: most of
// the RSS growth) and of what lives in it (heapUsed: what the names left behind); the time per
// name; and what query() finds left over.
const { locks, Mutex } = require('../../lib');

const [impl, count] = [process.argv[2], Number(process.argv[3])];
const nothing = () => {};
// The anchor ('mutex'): the same loop, the same names made, around one Mutex's executeLocked():
// what the loop costs the runtime itself from a cold start (compiling it, sizing the heap).
function mutexManager() {
  const mutex = new Mutex();
  return { request: (name, callback) => mutex.executeLocked(() => callback(name)), query: async () => ({ held: [], pending: [] }) };
}
const managers = { node: () => require('node:worker_threads').locks, parklock: () => locks, mutex: mutexManager };
const manager = managers[impl]();

async function settled() {
  // Twice, a turn apart: the first collection's finalizers may free more for the second.
  global.gc();
  await new Promise((resolve) => setImmediate(resolve));
  global.gc();
  return process.memoryUsage();
}

async function requestEach(prefix) {
  for (let i = 0; i < count; i++) await manager.request(`${prefix}-${i}`, nothing);
}

async function main() {
  await manager.request('first', nothing);
  const cold = await settled();
  const start = process.hrtime.bigint();
  await requestEach('name');
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const warm = await settled();
  await requestEach('again');
  const end = await settled();
  const left = await manager.query();
  const mb = (bytes) => bytes / 2 ** 20;
  console.log(JSON.stringify({
    rssGrowthMB: mb(warm.rss - cold.rss),
    heapTotalGrowthMB: mb(warm.heapTotal - cold.heapTotal),
    heapUsedGrowthMB: mb(warm.heapUsed - cold.heapUsed),
    warmRssGrowthMB: mb(end.rss - warm.rss),
    nsPerName: (ms * 1e6) / count,
    leftOver: left.held.length + left.pending.length,
  }));
}

main().catch((error) => {
  console.error(error.stack);
  process.exitCode = 1;
});
