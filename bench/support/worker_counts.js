'use strict';
// The worker counts the contention scenarios run: doubling up to 8, and 16 on a machine with that
// many cores (16 workers on fewer cores would measure the scheduler, and take a while to).
const os = require('node:os');

const MANY_CORES = 16;
const hasManyCores = () => os.availableParallelism() >= MANY_CORES;

function workerCounts({ from = 1 } = {}) {
  return [1, 2, 4, 8, ...(hasManyCores() ? [MANY_CORES] : [])].filter((n) => n >= from);
}

module.exports = { workerCounts, hasManyCores, MANY_CORES };
