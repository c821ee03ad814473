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
    process.send(result, () => {
      // After a failure, a worker may still be blocked in a wait that neither terminate() nor
      // exit() can interrupt (V8's Atomics.Mutex.lock): exit() would wait for it forever. The
      // result is already sent, so end the process at once.
      if (result.status === 'failed') process.kill(process.pid, 'SIGKILL');
      process.exit(0);
    });
  });
