'use strict';
// Entry point of a measurement child process: runs one repetition of one scenario for one
// implementation (and parameter) and sends the result to the parent over IPC.
//
// Why a fresh process per measurement: in one long-lived process the loops of the harness would
// see several implementations in turn and become polymorphic (slower for whichever came later),
// GC state and JIT caches would carry over, and V8's Atomics.Mutex needs a process started with
// --harmony-struct anyway.
const { unavailableReason } = require('./implementations');

async function main() {
  const spec = JSON.parse(process.argv[2]);
  const scenario = require(`../scenarios/${spec.scenario}`);
  const unavailable = unavailableReason(spec.impl);
  if (unavailable) return { status: 'skipped', reason: unavailable };
  const { metrics, extra } = await scenario.measure(spec);
  return { status: 'ok', metrics, extra };
}

main()
  .catch((error) => ({ status: 'failed', reason: error.message }))
  .then((result) => {
    // exit() rather than waiting for the event loop: after a failure, terminated workers or a
    // stuck lock must not keep this process alive.
    process.send(result, () => process.exit(0));
  });
