'use strict';
// One side of the ping-pong: repeatedly takes the lock and, if the shared TURN word says it is
// this side's turn, passes the turn to the other side (and increments the protected counter).
// The time per round trip is how long it takes the lock to let the other thread in and back.
const { workerData } = require('node:worker_threads');
const { implementation } = require('../support/implementations');
const { CONTROL, controlWords } = require('../support/control');
const { waitAtGate, reportDone, runWorker } = require('./common');
const { warmUp } = require('./warm_up');

const { impl, lockShared, control, side, rounds } = workerData;
const { COUNTER, TURN } = CONTROL;

// true if it was our turn (and we passed it on). Runs under the lock.
function play(ctl, me) {
  if (ctl[TURN] !== me) return false;
  ctl[TURN] = 1 - me;
  ctl[COUNTER] = ctl[COUNTER] + 1;
  return true;
}

function lockUnlockAttempt(lock, ctl, me) {
  lock.lock();
  const played = play(ctl, me);
  lock.unlock();
  return played;
}

// Atomics.Mutex has only the callback-scoped form; the callback is made once per control
// buffer, not once per attempt. `me` is always this worker's side.
let playerCtl;
let player;
function runLockedAttempt(lock, ctl, me) {
  if (playerCtl !== ctl) {
    playerCtl = ctl;
    player = () => play(ctl, me);
  }
  return lock.runLocked(player);
}

runWorker(async () => {
  const lock = implementation(impl).openSync(lockShared);
  const ctl = controlWords(control);
  const attempt = typeof lock.runLocked === 'function' ? runLockedAttempt : lockUnlockAttempt;
  // Alone on a private lock, give the turn back to ourselves each time so that play() succeeds.
  warmUp(impl, (privateLock, privateCtl) => {
    privateCtl[TURN] = side;
    attempt(privateLock, privateCtl, side);
  });

  waitAtGate(ctl);
  const start = process.hrtime.bigint();
  let played = 0;
  while (played < rounds) if (attempt(lock, ctl, side)) played++;
  reportDone({ ops: played, start, end: process.hrtime.bigint() });
});
