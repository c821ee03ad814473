'use strict';
// Teams of workers measured in alternating rounds inside one measurement process: every team is
// started once and parked; a round wakes one team (GO = round), lets it run for `roundMs`, stops
// it (STOP = round) and collects what each of its workers reported for that round. Running the
// teams' rounds one after another, in an order that rotates, puts the measurements to compare
// next to each other in time, so that a burst of load on a shared machine hits all of them
// rather than one. Each team has isolates of its own, so no team's code shapes another's JIT.
const { startWorkers, until } = require('./workers');
const { CONTROL, createControl, controlWords } = require('./control');

// workerDatas: one per worker of the team; each also gets the team's control buffer.
function startTeam(script, workerDatas, timeLimitMs) {
  const control = createControl();
  const reports = [];
  const group = startWorkers(script, workerDatas.map((data) => ({ ...data, control })), {
    timeLimitMs,
    onMessage(i, message) {
      if (message && message.type === 'round') (reports[message.round] ||= []).push(message);
    },
  });
  return { ctl: controlWords(control), group, reports, size: workerDatas.length };
}

async function teamsReady(teams, timeoutMs = 30_000) {
  for (const team of teams) {
    await until(() => Atomics.load(team.ctl, CONTROL.READY) >= team.size, team.group, timeoutMs,
      'a team to start');
  }
}

// One round of one team: its summed ops and waits, the wall time from the first worker's start
// to the last one's end (ns), and the fastest time per op any worker reported.
async function runRound(team, round, roundMs) {
  Atomics.store(team.ctl, CONTROL.GO, round);
  Atomics.notify(team.ctl, CONTROL.GO);
  await new Promise((resolve) => setTimeout(resolve, roundMs));
  Atomics.store(team.ctl, CONTROL.STOP, round);
  await until(() => (team.reports[round] || []).length === team.size, team.group, 30_000,
    `round ${round} to end`);
  const reports = team.reports[round];
  const first = reports.reduce((a, r) => (r.start < a ? r.start : a), reports[0].start);
  const last = reports.reduce((a, r) => (r.end > a ? r.end : a), reports[0].end);
  return {
    ops: reports.reduce((a, r) => a + r.ops, 0),
    waits: reports.reduce((a, r) => a + r.waits, 0),
    ns: Number(last - first),
    fastest: reports.reduce((a, r) => Math.min(a, r.fastest), Infinity),
  };
}

// Waits for every worker of the team to end; throws if any failed.
async function teamResults(team) {
  await team.group.finished;
  if (team.group.problems.length > 0) throw new Error(team.group.problems.join('; '));
  return team.group.results;
}

function rotate(list, by) {
  const k = by % list.length;
  return [...list.slice(k), ...list.slice(0, k)];
}

module.exports = { startTeam, teamsReady, runRound, teamResults, rotate };
