'use strict';
// What bench/cross_process_watch.js adds to the children: words that a holder process keeps
// locked for the whole run, on which a child queues lockAsync() calls that never end, so that
// its relay (addon/across_processes/cross_process.h) watches that many words more; and what watching costs a
// process that does nothing else.
const { Mutex } = require('../../../lib');
const { readyThenGo, openRegion } = require('./protocol');

// The first `count` held words: Mutex i at byte spec.heldAt + 4 * i.
function heldMutexes(memory, spec, count) {
  return Array.from({ length: count }, (_, i) => new Mutex(memory, spec.heldAt + 4 * i));
}

// Queues a wait that never ends on each of the first `count` held words: this process's relay
// watches them until it exits.
function watchHeldWords(memory, spec, count) {
  const mutexes = heldMutexes(memory, spec, count);
  for (const mutex of mutexes) mutex.lockAsync().catch(() => {});
  const queued = mutexes.filter((mutex) => mutex.waiting > 0).length;
  if (queued !== count) throw new Error(`${queued} of ${count} waits on held words queued`);
}

// Mode "holdwords": locks spec.count held words and keeps them until killed.
function holdWords(spec) {
  for (const mutex of heldMutexes(openRegion(spec), spec, spec.count)) mutex.lock();
  process.send({ type: 'locked' });
  return new Promise(() => {});
}

// Mode "idlewatch": watches spec.watched held words for spec.ms and reports the CPU time the
// process used meanwhile (its relay threads: the main thread only waits for a timer).
async function idleWatch(spec) {
  watchHeldWords(openRegion(spec), spec, spec.watched);
  await readyThenGo();
  const before = process.cpuUsage();
  const start = process.hrtime.bigint();
  await new Promise((resolve) => setTimeout(resolve, spec.ms));
  const used = process.cpuUsage(before);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return { cpuMsPerSec: (used.user + used.system) / 1e3 / seconds };
}

module.exports = { watchHeldWords, holdWords, idleWatch };
