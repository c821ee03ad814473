'use strict';
// The cases of a run (one per row of the report) and the loop that runs their repetitions.
const { rotate } = require('../support/teams');
const { measureThroughput, measureHandOff, measureOwnerDeath } = require('./measure');

const PARKLOCK_LABEL = 'parklock Mutex (sharedMemory)';

// ctx.flock and ctx.properLockfile are what baselines.js found: a baseline that could not be had
// makes its cases skipped.
function buildCases(ctx) {
  const flockSkip = ctx.flock.reason && `flock unavailable: ${ctx.flock.reason}`;
  const lockfileSkip = ctx.properLockfile.reason && `proper-lockfile unavailable: ${ctx.properLockfile.reason}`;
  const flockLabel = ctx.flock.label || 'flock(2)';
  const lockfileLabel = ctx.properLockfile.label || 'proper-lockfile';
  const throughput = (key, label, skip) => ({ section: 'throughput', key, label, skip, run: () => measureThroughput(key, ctx) });
  const handOff = (key, label, skip) => ({ section: 'handoff', key, label, skip, run: () => measureHandOff(key, ctx) });
  const death = (key, label) => ({ section: 'death', key, label, run: () => measureOwnerDeath(key, ctx) });
  const cases = [
    throughput('parklock', PARKLOCK_LABEL),
    throughput('flock', flockLabel, flockSkip),
    throughput('proper-lockfile', lockfileLabel, lockfileSkip),
    handOff('parklock', PARKLOCK_LABEL),
    handOff('flock', flockLabel, flockSkip),
    death('pending', 'pending lockAsync(), from kill()'),
    death('newcomer', 'newcomer lock() right after kill(), from kill()'),
    death('reaped', 'newcomer lock() once the holder is reaped, from the lock() call'),
  ];
  return cases.map((c) => ({ ...c, outcomes: [] }));
}

// Repetitions interleave (rep 1 of every case, then rep 2, ...) and the order rotates, so that a
// burst of load on this machine lands on different cases rather than on every run of one. A
// failed repetition is recorded with its reason and the run goes on.
async function runAll(cases, reps) {
  for (let rep = 0; rep < reps; rep++) {
    process.stderr.write(`rep ${rep + 1}/${reps}: `);
    for (const c of rotate(cases, rep)) {
      if (c.skip) {
        if (rep === 0) c.outcomes.push({ status: 'skipped', reason: c.skip });
        process.stderr.write('s');
        continue;
      }
      try {
        c.outcomes.push({ status: 'ok', ...(await c.run()) });
        process.stderr.write('.');
      } catch (error) {
        c.outcomes.push({ status: 'failed', reason: error.message });
        process.stderr.write('F');
      }
    }
    process.stderr.write('\n');
  }
}

module.exports = { buildCases, runAll };
