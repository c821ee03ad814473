'use strict';
// RWLock writer share: one writer beside four readers that hold the lock about 2 µs each time and
// take it again at once, all with the blocking forms, for 1 s; parklock's RWLock against the
// writer-preferring lock a user would write with Atomics (baselines/js_rwlock.js). On a machine
// with fewer cores than readers some reader nearly always holds the lock, so what the writer gets
// shows whether its arrival keeps new readers out: a writer that waits without doing so waits as
// long as readers keep coming (43 to 1,071 writes a second on 2 cores, before the RWLock's writer
// drained the readers it found).
const { createControl, controlWords } = require('../support/control');
const { startWorkers, openGateWhenReady, stopAndCollect } = require('../support/workers');
const { checkControlCounter } = require('../support/check');
const { LABELS, createRwLock } = require('../support/rw_share');

const READERS = 4;

module.exports = {
  title: `RWLock writer share: 1 writer beside ${READERS} readers (~2 µs reads), blocking forms`,
  implementations: ['parklock-rw', 'js-rwlock'],
  labels: LABELS,
  params: () => [`1 + ${READERS}`],
  paramLabel: 'writer + readers',
  metrics: [
    { key: 'writesPerSec', label: 'writes/s', better: 'higher', digits: 0 },
    { key: 'readsPerSec', label: 'reads/s', better: 'higher', digits: 0 },
    { key: 'longestWaitMs', label: 'writer max wait ms', better: 'lower', digits: 1 },
  ],
  baselines: ['js-rwlock'],
  timeLimitMs: () => 35_000,

  async measure({ impl, quick, steps }) {
    const durationMs = quick ? 300 : 1000;
    const control = createControl();
    const ctl = controlWords(control);
    const lockShared = createRwLock();
    const roles = ['writer', ...Array.from({ length: READERS }, () => 'reader')];
    const group = startWorkers('rw_share', roles.map((role) => ({ impl, lockShared, control, role, steps })),
      { timeLimitMs: durationMs + 30_000 });
    const openedAt = await openGateWhenReady(ctl, roles.length, group);
    await new Promise((resolve) => setTimeout(resolve, durationMs));
    const results = await stopAndCollect(ctl, group);
    const seconds = Number(process.hrtime.bigint() - openedAt) / 1e9;
    const writer = results.find((r) => r.role === 'writer');
    checkControlCounter(ctl, writer.ops);
    const reads = results.filter((r) => r.role === 'reader').reduce((a, r) => a + r.ops, 0);
    return {
      metrics: {
        writesPerSec: writer.ops / seconds,
        readsPerSec: reads / seconds,
        longestWaitMs: writer.longestWaitMs,
      },
    };
  },
};
