'use strict';
// Waiters for the condition-requeue benchmark. Each round, every waiter takes the mutex, counts
// itself in ARRIVED, and waits on the condition until GENERATION moves; then it does a tiny
// critical section (counter++), counts itself in PASSED and releases the mutex.
// `mode` 'sync': this worker is one blocking waiter (condition.wait). 'async': it runs `waiters`
// concurrent tasks, each an async waiter (mutex.lockAsync + condition.waitAsync).
// A round starts only when the coordinator posts { type: 'round' }: re-arriving for the next
// round must not compete for the mutex while the current round is being timed.
const { parentPort, workerData } = require('node:worker_threads');
const { Mutex, Condition } = require('../../lib');
const { CONTROL, controlWords } = require('../support/control');
const { reportDone, runWorker } = require('./common');

const { mutexLocation, conditionLocation, control, mode, waiters, rounds, total } = workerData;
const { ARRIVED, PASSED, GENERATION, COUNTER } = CONTROL;

let announcedRound = 0;
let roundListeners = [];
function onMessage(message) {
  if (message.type !== 'round') return;
  announcedRound = message.round;
  const listeners = roundListeners;
  roundListeners = [];
  listeners.forEach((resolve) => resolve());
}
parentPort.on('message', onMessage);

async function roundStarted(round) {
  while (announcedRound < round) await new Promise((resolve) => roundListeners.push(resolve));
}

// Under the mutex. ARRIVED/PASSED are atomics because the coordinator waits on them.
function arrive(ctl, round) {
  const generation = Atomics.load(ctl, GENERATION);
  if (Atomics.add(ctl, ARRIVED, 1) + 1 === total * round) Atomics.notify(ctl, ARRIVED);
  return generation;
}

function pass(ctl, round) {
  ctl[COUNTER] = ctl[COUNTER] + 1;
  if (Atomics.add(ctl, PASSED, 1) + 1 === total * round) Atomics.notify(ctl, PASSED);
}

async function syncWaiter(mutex, condition, ctl) {
  for (let round = 1; round <= rounds; round++) {
    await roundStarted(round);
    mutex.lock();
    const generation = arrive(ctl, round);
    while (Atomics.load(ctl, GENERATION) === generation) condition.wait(mutex);
    pass(ctl, round);
    mutex.unlock();
  }
}

async function asyncWaiter(mutex, condition, ctl) {
  for (let round = 1; round <= rounds; round++) {
    await roundStarted(round);
    await mutex.lockAsync();
    const generation = arrive(ctl, round);
    while (Atomics.load(ctl, GENERATION) === generation) await condition.waitAsync(mutex);
    pass(ctl, round);
    mutex.unlock();
  }
}

runWorker(async () => {
  const mutex = new Mutex(mutexLocation);
  const condition = new Condition(conditionLocation);
  const ctl = controlWords(control);
  if (mode === 'sync') {
    await syncWaiter(mutex, condition, ctl);
  } else {
    const tasks = [];
    for (let i = 0; i < waiters; i++) tasks.push(asyncWaiter(mutex, condition, ctl));
    await Promise.all(tasks);
  }
  // off() with the listener itself un-refs the port (removeAllListeners does not), so that the
  // worker can exit.
  parentPort.off('message', onMessage);
  reportDone({});
});
