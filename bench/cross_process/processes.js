'use strict';
// Child processes seen from the process that started them: the parent's contenders, and the
// holders the owner-death coordinator starts. Node children (child/main.js) talk over IPC, the C
// helper in JSON lines on its stdio; both look alike from here, as an endpoint.
const path = require('node:path');
const { fork, spawn } = require('node:child_process');

const CHILD_MAIN = path.join(__dirname, 'child', 'main.js');
const STDERR_TAIL = 600;
// SIGKILL always ends a process, but its 'close' is given up on after this rather than awaited
// forever.
const CLOSE_GRACE_MS = 5_000;

// The endpoints of every child started and not yet exited, for killAll().
const live = new Set();

// An endpoint listens from the moment its child starts: messages are queued until listen() is
// called and errors are recorded until then, so that nothing the child does before its
// listeners are attached is lost, and an 'error' never goes unhandled (which would crash this
// process). `closed` resolves once the child exited and its output is all in.
function endpoint(child, send, subscribe) {
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL);
  });
  const queued = [];
  let onMessage = (message) => queued.push({ message });
  let onError = (error) => queued.push({ error });
  subscribe((message) => onMessage(message));
  child.on('error', (error) => onError(error));
  const closed = new Promise((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  const self = {
    pid: child.pid,
    send,
    // One listener per endpoint; what came before it is replayed in order.
    listen(messageListener, errorListener = () => {}) {
      onMessage = messageListener;
      onError = errorListener;
      for (const { message, error } of queued.splice(0)) {
        if (error) errorListener(error);
        else messageListener(message);
      }
    },
    closed,
    // Never a child that did not start (no pid): until its 'error' is emitted, Node passes
    // kill() on to whatever pid its never-filled process handle holds (strace showed
    // kill(2097162, SIGKILL); a 0 there would be this process's whole group).
    kill() {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
    stderr: () => stderr.trim(),
  };
  live.add(self);
  child.on('exit', () => live.delete(self));
  closed.then(() => live.delete(self));
  return self;
}

// A Node child running child/main.js in the mode spec.mode.
function forkChild(spec) {
  // execArgv explicit: the children must not inherit this process's flags.
  const child = fork(CHILD_MAIN, [JSON.stringify(spec)], {
    execArgv: [],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  return endpoint(
    child,
    (message) => child.connected && child.send(message),
    (onMessage) => child.on('message', onMessage),
  );
}

function readJsonLines(stream, onMessage) {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    pending += chunk;
    let newline;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        message = { type: 'failed', reason: `unreadable line from the helper: ${line.slice(0, 200)}` };
      }
      onMessage(message);
    }
  });
}

// The C helper (flock_helper.c).
function spawnHelper(binary, args) {
  const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  // A helper that died already makes the write fail with EPIPE: its 'close' reports that.
  child.stdin.on('error', () => {});
  return endpoint(
    child,
    (message) => child.stdin.write(`${message.type}\n`),
    (onMessage) => readJsonLines(child.stdout, onMessage),
  );
}

// Runs the processes of one measurement: once every one reported ready, `begin(endpoints)` starts
// them; resolves with each one's 'done' report. A failure, an exit without a report, or an overrun
// kills them all and rejects, so a measurement is either complete or a failure; it never hangs.
function runGroup(endpoints, { timeLimitMs, begin }) {
  return new Promise((resolve, reject) => {
    const reports = new Array(endpoints.length);
    let ready = 0;
    let closed = 0;
    let failure;
    let settled = false;
    let grace;
    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      if (failure === undefined) resolve(reports);
      else reject(new Error(failure));
    };
    const fail = (reason) => {
      if (failure !== undefined || settled) return;
      failure = reason;
      endpoints.forEach((e) => e.kill());
      grace = setTimeout(settle, CLOSE_GRACE_MS);
    };
    const timer = setTimeout(() => {
      const reported = reports.filter(Boolean).length;
      fail(`timed out after ${timeLimitMs} ms (${ready}/${endpoints.length} ready, ${reported} reported, ` +
        `${closed} exited)`);
    }, timeLimitMs);
    const onMessage = (i, message) => {
      if (!message || typeof message !== 'object') return;
      if (message.type === 'ready') {
        // Not once the group failed: its processes are being killed, and begin() may start timers.
        if (++ready === endpoints.length && failure === undefined) {
          try {
            begin(endpoints);
          } catch (error) {
            fail(error.message);
          }
        }
      } else if (message.type === 'done') reports[i] = message;
      else if (message.type === 'failed') fail(`process ${i}: ${message.reason}`);
    };
    endpoints.forEach((e, i) => {
      e.listen((message) => onMessage(i, message), (error) => fail(`process ${i}: ${error.message}`));
      e.closed.then(({ code, signal }) => {
        if (reports[i] === undefined) {
          const tail = e.stderr();
          fail(`process ${i} ended (${signal || `code ${code}`}) without a result${tail ? `: ${tail}` : ''}`);
        }
        if (++closed === endpoints.length) settle();
      });
    });
  });
}

const goAll = (endpoints) => endpoints.forEach((e) => e.send({ type: 'go' }));

function killAll() {
  for (const e of live) e.kill();
}

module.exports = { forkChild, spawnHelper, runGroup, goAll, killAll };
