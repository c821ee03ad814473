'use strict';
// Runs one measurement in a child process (support/child.js) and returns its result; the child
// is killed if it overruns its time limit, and a child that dies without answering is a failure
// carrying the end of its stderr.
const path = require('node:path');
const { fork } = require('node:child_process');

const CHILD = path.join(__dirname, 'child.js');
const STDERR_TAIL = 600;

function runInChild(spec, { execArgv = [], timeLimitMs }) {
  return new Promise((resolve) => {
    // execArgv is always explicit: fork() would otherwise pass on this process's own flags
    // (--harmony-struct included), and only the Atomics.Mutex children should get that one.
    const child = fork(CHILD, [JSON.stringify(spec)], {
      execArgv,
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    let answer;
    let killedForTime = false;
    child.stderr.on('data', (chunk) => {
      stderr = (stderr + chunk).slice(-STDERR_TAIL);
    });
    child.on('message', (message) => {
      answer = message;
    });
    const timer = setTimeout(() => {
      killedForTime = true;
      child.kill('SIGKILL');
    }, timeLimitMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (answer !== undefined) return resolve(answer);
      // A child that stops answering altogether (its main thread cannot even run the timers
      // that end a stuck measurement) has so far always been a --harmony-struct child: V8's
      // experimental shared heap can deadlock a GC safepoint against worker isolates that are
      // still starting (seen with gdb: main thread in GlobalSafepoint::EnterGlobalSafepointScope,
      // workers in Isolate::Init).
      const hint = execArgv.includes('--harmony-struct') ? ' (unresponsive --harmony-struct child)' : '';
      const why = killedForTime
        ? `killed after the ${timeLimitMs} ms limit${hint}`
        : `child exited (${signal || `code ${code}`}) without a result`;
      resolve({ status: 'failed', reason: stderr.trim() ? `${why}: ${stderr.trim()}` : why });
    });
  });
}

module.exports = { runInChild };
