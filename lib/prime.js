'use strict';
// The contended calls of a primitive, made ready before the thread's first contention.
//
// V8 optimizes lock() and unlock(), and the caller's function they are inlined into, from the
// feedback their calls have collected. In a thread whose locks have only ever been free, the
// calls into the addon have none, so that code is compiled without them: the first contended
// call deoptimizes it, caller included, and the thread runs unoptimized code until V8 has
// compiled it again, which on a busy machine took milliseconds per thread (bench: ping_pong).
// So the first instance of each primitive that a thread constructs first runs its slow paths
// on a private instance, where the addon answers at once (a lock the thread holds is refused, a
// wait whose time is up returns, a release or notify finds nobody queued), often enough for V8 to
// record those calls. The private instance is then dropped; nothing else is touched.
const { tracing } = require('./diagnostics');

// V8 allocates a function's feedback, and starts recording its calls, after about 8 calls (a
// budget of 8 times its bytecode size); twice that leaves some recorded.
const ROUNDS = 16;

// Returns prime(): its first call makes the primitive with makeRound() and runs the round it
// returns ROUNDS times; later calls do nothing.
function primer(makeRound) {
  let primed = false;
  return function prime() {
    if (primed) return;
    primed = true;
    // A subscriber already listening would be told about the refusals as if they were waits; a
    // thread traced from the start keeps the deoptimization instead.
    if (tracing()) return;
    const round = makeRound();
    for (let i = 0; i < ROUNDS; i++) round();
  };
}

module.exports = { primer };
