'use strict';
// RWLock read scaling: N readers take the read side of one RWLock in a loop, with nobody
// writing; the critical section only reads shared memory (workers/sync_hammer.js), with ~2 µs of
// busy work or none. Ideal scaling is N times one reader's throughput; what is lost goes to the
// cache line of the lock word, which every read acquisition and release writes. parklock's Mutex
// over the same sections is the line a lock that serializes the readers would draw.
const { measureContended, CONTENDED_METRICS } = require('../support/contended');
const { workerCounts } = require('../support/worker_counts');

const SECTIONS = ['2 µs', 'tiny'];

// "2 µs x 16" -> { section: '2 µs', readers: 16 }
function parseParam(param) {
  const [section, readers] = param.split(' x ');
  return { section, readers: Number(readers) };
}

module.exports = {
  title: 'RWLock read scaling: N readers, no writer',
  cases: () => SECTIONS.flatMap((section) => workerCounts().flatMap((readers) =>
    ['parklock-read', 'parklock'].map((impl) => ({ impl, param: `${section} x ${readers}` })))),
  paramLabel: 'section x readers',
  metrics: CONTENDED_METRICS,
  baselines: ['parklock'],
  timeLimitMs: () => 35_000,
  parseParam,

  measure({ impl, param, quick, steps }) {
    const { section, readers } = parseParam(param);
    return measureContended({
      impl,
      workers: readers,
      steps: section === 'tiny' ? 0 : steps,
      durationMs: quick ? 150 : 500,
      batch: section === 'tiny' ? 32 : 4,
    });
  },
};
