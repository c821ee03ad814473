'use strict';
// What the diagnostics_channel tracing of contended waits costs when nobody subscribes.
//
// Each measurement process runs four teams of workers on the same workload (see
// workers/diagnostics_team.js), each with the tracing in one state:
//   none            no subscriber: the state every user who does not trace is in
//   subscribed      a subscriber on both channels: what tracing costs when it is on
//   bypassed        lib/diagnostics.js stubbed out before lib/ loads: the contended paths with
//                   no tracing check at all, the baseline
//   bypassed-again  the same as bypassed: its ratio to bypassed (A/A) is how far apart two
//                   identical teams come out in this process, the noise floor of the others
// in alternating rounds (support/teams.js); the first round of every team is a warm-up and is
// not counted. Per round, each team's time per op is taken as suits its workload:
//   single thread   its fastest batch of the round: interference from the rest of the machine
//                   only adds time, so the minimum is the code's own cost
//   two workers     the round's wall time per op (the fastest batch would be one where the other
//                   worker was not running, with no contention to measure)
// and divided by the bypassed team's from the same round; the median of those ratios is the
// measurement's, so each repetition (a fresh process) gives one ratio of its own. The subscribed
// team's subscriber counts the contended waits the workload went through.
const { implementation } = require('../support/implementations');
const { startTeam, teamsReady, runRound, teamResults, rotate } = require('../support/teams');
const { checkCount } = require('../support/check');
const { CONTROL } = require('../support/control');
const { median } = require('../support/stats');

// In this order, bypassed and bypassed-again have the same two neighbours (see roundOrder).
const TEAMS = [
  { name: 'none', mode: 'none' },
  { name: 'bypassed', mode: 'bypassed' },
  { name: 'subscribed', mode: 'subscribed' },
  { name: 'bypassed-again', mode: 'bypassed' },
];
// batch: ops between two checks of STOP, and per timed batch (~50-100 µs of work when
// single-threaded).
const WORKLOADS = {
  'blocking-wait': { workers: 1, batch: 256, roundMs: 120, quickRoundMs: 40 },
  'sync-contended': { workers: 2, batch: 32, roundMs: 120, quickRoundMs: 40 },
  'async-handoff': { workers: 1, batch: 64, roundMs: 120, quickRoundMs: 40 },
  'trace-call': { workers: 1, batch: 200_000, roundMs: 60, quickRoundMs: 20 },
};
const WARM_UP_ROUNDS = 1;
// Whole cycles of roundOrder's eight orders.
const MEASURED_ROUNDS = 16;
const QUICK_MEASURED_ROUNDS = 8;

// The teams' order in a round: forward, then the same reversed, then rotated by one, ... so that
// every team runs first and last equally often, and right after each of its two neighbours
// equally often: whatever a team leaves behind (the subscribed one's garbage) slows bypassed as
// often as it slows bypassed-again.
function roundOrder(round) {
  const order = rotate(TEAMS.map((_, k) => k), Math.floor(round / 2));
  return round % 2 === 0 ? order : order.reverse();
}

function sum(values) {
  return values.reduce((a, b) => a + b, 0);
}

// Every team's protected counter must hold exactly the ops its rounds reported; the probe at the
// end of each worker must have seen its wait unless tracing was bypassed.
function checkTeam({ name, mode }, team, rounds, results) {
  const ops = sum(team.reports.slice(1, rounds + 1).flat().map((r) => r.ops));
  checkCount(Atomics.load(team.ctl, CONTROL.COUNTER), ops | 0, `${name} team's protected counter`);
  const expected = mode === 'bypassed' ? 0 : 1;
  for (const { probeWaits } of results) {
    if (probeWaits !== expected) {
      throw new Error(`${name} team: the probe saw ${probeWaits} wait(s), expected ${expected}`);
    }
  }
}

// Each team's median time per op (ns) and median ratio to the bypassed team, round by round.
function estimate(plan, measured) {
  const perOp = plan.workers === 1 ? (r) => r.fastest : (r) => r.ns / r.ops;
  const ns = (name) => median(measured[name].map(perOp));
  const ratio = (name) =>
    median(measured[name].map((r, k) => perOp(r) / perOp(measured.bypassed[k])));
  return { ns, ratio };
}

function metricsOf(workload, measured) {
  const plan = WORKLOADS[workload];
  const waits = sum(measured.subscribed.map((r) => r.waits));
  const ops = sum(measured.subscribed.map((r) => r.ops));
  if (waits === 0) throw new Error('no contended waits: the workload measured nothing');
  // Every op of the other workloads is exactly one traced wait.
  if (workload !== 'sync-contended') checkCount(waits, ops, 'traced waits');
  const { ns, ratio } = estimate(plan, measured);
  return {
    noSubRatio: ratio('none'),
    aaRatio: ratio('bypassed-again'),
    subRatio: ratio('subscribed'),
    noSubNs: ns('none'),
    bypassedNs: ns('bypassed'),
    waitsPerOp: waits / ops,
    waits,
  };
}

module.exports = {
  title: 'diagnostics_channel: contended waits, no subscriber vs tracing bypassed (same process)',
  cases: () => Object.keys(WORKLOADS).map((impl) => ({ impl })),
  labels: {
    'blocking-wait': 'futex.wait timing out at once, 1 thread',
    'sync-contended': 'Mutex lock/unlock, 2 workers',
    'async-handoff': 'lockAsync hand-off, 1 thread',
    'trace-call': 'traceBlocking call alone',
  },
  metrics: [
    { key: 'noSubRatio', label: 'no-sub / bypassed', better: 'lower', digits: 3 },
    { key: 'aaRatio', label: 'A/A', digits: 3 },
    { key: 'subRatio', label: 'subscribed / bypassed', better: 'lower', digits: 2 },
    { key: 'noSubNs', label: 'no-sub ns/op', digits: 1 },
    { key: 'bypassedNs', label: 'bypassed ns/op', digits: 1 },
    { key: 'waitsPerOp', label: 'waits/op', digits: 2 },
    { key: 'waits', label: 'waits traced', digits: 0 },
  ],
  baselines: [],
  timeLimitMs: (quick) => (quick ? 20_000 : 60_000),
  info: () => ({
    title: 'Reading diagnostics_cost',
    values: {
      'no-sub / bypassed': 'time per op, nobody subscribed / tracing stubbed out, same process',
      'A/A': 'the same for a second bypassed team: the noise floor of this process',
      'subscribed / bypassed': 'the same with a subscriber on both channels',
      'ns/op': 'median over the rounds of: 1 thread, the fastest batch; 2 workers, the round',
      'waits/op, waits traced': 'contended waits of the subscribed team, counted by its subscriber',
      range: 'min..max of the no-sub ratio over the repetitions (each a fresh process)',
    },
  }),

  async measure({ impl: workload, quick }) {
    const plan = WORKLOADS[workload];
    const rounds = WARM_UP_ROUNDS + (quick ? QUICK_MEASURED_ROUNDS : MEASURED_ROUNDS);
    const roundMs = quick ? plan.quickRoundMs : plan.roundMs;
    const teams = TEAMS.map(({ mode }) => {
      const lockShared = implementation('parklock').create();
      const data = { mode, workload, lockShared, rounds, batch: plan.batch };
      return startTeam('diagnostics_team', Array.from({ length: plan.workers }, () => data),
        quick ? 15_000 : 40_000);
    });
    try {
      await teamsReady(teams);
      const measured = Object.fromEntries(TEAMS.map(({ name }) => [name, []]));
      for (let round = 1; round <= rounds; round++) {
        for (const k of roundOrder(round)) {
          const result = await runRound(teams[k], round, roundMs);
          if (result.ops === 0) throw new Error(`${TEAMS[k].name}: no op done in round ${round}`);
          if (round > WARM_UP_ROUNDS) measured[TEAMS[k].name].push(result);
        }
      }
      for (let k = 0; k < TEAMS.length; k++) {
        checkTeam(TEAMS[k], teams[k], rounds, await teamResults(teams[k]));
      }
      return { metrics: metricsOf(workload, measured) };
    } catch (error) {
      teams.forEach((team) => team.group.terminate());
      throw error;
    }
  },
};
