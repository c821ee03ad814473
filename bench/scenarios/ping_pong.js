'use strict';
// (7) Ping-pong: two worker threads pass a turn back and forth through the lock and a shared
// TURN word; reported is the round-trip time (A -> B -> A).
//
// Each side polls under the lock, so this measures lock-mediated hand-over: a lock that lets the
// same thread re-take it over and over while the other is asleep in the queue (unbounded barging)
// shows long round trips here even if its raw throughput is high.
const { implementation } = require('../support/implementations');
const { createControl, controlWords } = require('../support/control');
const { startWorkers, openGateWhenReady } = require('../support/workers');
const { checkControlCounter } = require('../support/check');

module.exports = {
  title: 'Ping-pong hand-off between two threads (lock + turn word)',
  implementations: ['parklock', 'drepper', 'v8-blog', 'v8-atomics'],
  params: () => [null],
  metrics: [{ key: 'roundTripUs', label: 'round trip µs', better: 'lower', digits: 2 }],
  timeLimitMs: () => 60_000,

  async measure({ impl, quick }) {
    const rounds = quick ? 3_000 : 20_000;
    const control = createControl();
    const ctl = controlWords(control);
    const lockShared = implementation(impl).create();
    const group = startWorkers(
      'ping_pong',
      [0, 1].map((side) => ({ impl, lockShared, control, side, rounds })),
      { timeLimitMs: 50_000 },
    );
    await openGateWhenReady(ctl, 2, group);
    await group.finished;
    if (group.problems.length > 0) throw new Error(group.problems.join('; '));
    checkControlCounter(ctl, 2 * rounds);
    const [a, b] = group.results;
    const first = a.start < b.start ? a.start : b.start;
    const last = a.end > b.end ? a.end : b.end;
    return { metrics: { roundTripUs: Number(last - first) / 1e3 / rounds } };
  },
};
