'use strict';
// Waiters for the condition-requeue benchmark. Each round, every waiter takes the mutex, counts
// itself in ARRIVED, and waits on the condition until GENERATION moves; then it does a tiny
// critical section (counter++), counts itself in PASSED and releases the mutex.
// `mode` 'sync': this worker is one blocking waiter (condition.wait). 'async': it runs `waiters`
// concurrent tasks, each an async waiter (mutex.lockAsync + condition.waitAsync).
// A sync waiter also counts how its wake-ups fared (the addon's wakeStats(): woken to compete
// for the mutex, futile when it had to park on the mutex again, handed the mutex) across its
// waits alone, not its arrivals; the coordinator sums them. Promise waiters are not counted: a
// Promise wait that is woken and finds the mutex taken queues again without parking a thread.
// A round starts only when the coordinator posts { type: 'round' }: re-arriving for the next
// round must not compete for the mutex while the current round is being timed.
const { parentPort, workerData } = require('node:worker_threads');
const { Mutex, Condition } = require('../../lib');
const native = require('../../lib/native');
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

// Returns the wake-up counts of its waits, summed over the rounds.
async function syncWaiter(mutex, condition, ctl) {
  const wakeUps = { woken: 0, futile: 0, handedOff: 0 };
  for (let round = 1; round <= rounds; round++) {
    await roundStarted(round);
    mutex.lock();
    const generation = arrive(ctl, round);
    const before = native.wakeStats();
    while (Atomics.load(ctl, GENERATION) === generation) condition.wait(mutex);
    const after = native.wakeStats();
    pass(ctl, round);
    mutex.unlock();
    for (const key of Object.keys(wakeUps)) wakeUps[key] += after[key] - before[key];
  }
  return wakeUps;
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
  let wakeUps = null;
  if (mode === 'sync') {
    wakeUps = await syncWaiter(mutex, condition, ctl);
  } else {
    const tasks = [];
    for (let i = 0; i < waiters; i++) tasks.push(asyncWaiter(mutex, condition, ctl));
    await Promise.all(tasks);
  }
  // off() with the listener itself un-refs the port (removeAllListeners does not), so that the
  // worker can exit.
  parentPort.off('message', onMessage);
  reportDone({ wakeUps });
});
