'use strict';
// One side of the ping-pong: repeatedly takes the lock and, if the shared TURN word says it is
// this side's turn, passes the turn to the other side (and increments the protected counter).
// The time per round trip is how long it takes the lock to let the other thread in and back.
const { workerData } = require('node:worker_threads');
const { implementation } = require('../support/implementations');
const { CONTROL, controlWords } = require('../support/control');
const { waitAtGate, reportDone, runWorker } = require('./common');

const { impl, lockShared, control, side, rounds } = workerData;
const { COUNTER, TURN } = CONTROL;

runWorker(async () => {
  const lock = implementation(impl).openSync(lockShared);
  const ctl = controlWords(control);
  // true if it was our turn (and we passed it on). Runs under the lock.
  const play = () => {
    if (ctl[TURN] !== side) return false;
    ctl[TURN] = 1 - side;
    ctl[COUNTER] = ctl[COUNTER] + 1;
    return true;
  };
  const attempt = typeof lock.runLocked === 'function'
    ? () => lock.runLocked(play)
    : () => {
      lock.lock();
      const played = play();
      lock.unlock();
      return played;
    };

  waitAtGate(ctl);
  const start = process.hrtime.bigint();
  let played = 0;
  while (played < rounds) if (attempt()) played++;
  reportDone({ ops: played, start, end: process.hrtime.bigint() });
});
