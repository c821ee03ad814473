'use strict';
// The "longer critical section": a fixed amount of integer arithmetic (xorshift steps) whose
// result is stored in shared memory under the lock, so the optimizer can neither drop nor hoist
// it. The number of steps is calibrated once per run (in the parent) to about TARGET_NS and then
// passed to every child, so that every implementation does exactly the same work per operation.

const TARGET_NS = 2000;

function busyWork(steps, seed) {
  let x = seed | 1;
  for (let i = 0; i < steps; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
  }
  return x;
}

// Steps for ~targetNs. The minimum over several trials is the estimate: on a loaded machine,
// interference only ever makes a trial slower.
function calibrateSteps(targetNs = TARGET_NS) {
  const trialSteps = 200_000;
  let sink = 0;
  for (let i = 0; i < 20; i++) sink ^= busyWork(trialSteps, i); // let TurboFan optimize it
  let best = Infinity;
  for (let trial = 0; trial < 15; trial++) {
    const start = process.hrtime.bigint();
    sink ^= busyWork(trialSteps, trial);
    best = Math.min(best, Number(process.hrtime.bigint() - start));
  }
  const nsPerStep = best / trialSteps;
  return { steps: Math.max(1, Math.round(targetNs / nsPerStep)), nsPerStep, sink };
}

module.exports = { busyWork, calibrateSteps, TARGET_NS };
