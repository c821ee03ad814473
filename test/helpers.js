'use strict';
// Helpers shared by the JavaScript tests.
//
// Timing policy: no test asserts that something happens *within* a short time, because a loaded
// 2-core machine can stall any thread for a long while. Time limits here only turn a hang (a lost
// wake-up, a deadlock, a worker that never exits) into a quick, named failure.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { setMaxListeners } = require('node:events');
const native = require('../lib/native');
const { pendingCount } = require('../lib/async_waits');

// How long to wait for something that should happen "soon" before calling it a hang.
const HANG_LIMIT_MS = 10_000;

function fixture(name) {
  return path.join(__dirname, 'fixtures', name);
}

// The mutex's one shared word.
function wordOf(mutex) {
  return new Int32Array(mutex.buffer, mutex.byteOffset, 1);
}

function loadWord(mutex) {
  return Atomics.load(wordOf(mutex), 0);
}

// Waiters parked on the mutex's word, in any thread.
function queued(mutex) {
  return native.queuedCount(wordOf(mutex), 0);
}

// The state every test must leave its mutexes in: unlocked (the whole word 0) with nobody queued,
// and no asynchronous wait of this thread left pending.
function assertClean(mutex) {
  assert.equal(loadWord(mutex), 0, 'the mutex word is 0 (unlocked, no owner bits)');
  assert.equal(mutex.isLocked, false);
  assert.equal(queued(mutex), 0, 'no waiter is left in the parking lot');
  assert.equal(pendingCount(), 0, 'no asynchronous wait is left pending on this thread');
}

const tick = (ms = 1) => new Promise((resolve) => setTimeout(resolve, ms));

// Polls `predicate` until it returns true; rejects (naming `what`) after `limit` ms.
async function waitFor(predicate, what, limit = HANG_LIMIT_MS) {
  const start = Date.now();
  while (!predicate()) {
    if (Date.now() - start > limit) throw new Error(`timed out waiting for: ${what}`);
    await tick(2);
  }
}

// Rejects with a hang error if `promise` has not settled within `limit` ms.
function withinLimit(promise, what, limit = HANG_LIMIT_MS) {
  let timer;
  const hang = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang: ${what} did not finish in ${limit} ms`)), limit);
  });
  return Promise.race([promise, hang]).finally(() => clearTimeout(timer));
}

// A signal for asynchronous waits that a bug could leave pending forever (which would keep the
// test process alive after its last test): abortTestWaits(), called after each test, aborts it.
let testWaits = new AbortController();
setMaxListeners(0, testWaits.signal);
function testSignal() {
  return testWaits.signal;
}
function abortTestWaits() {
  testWaits.abort(new Error('the test ended while this wait was pending'));
  testWaits = new AbortController();
  setMaxListeners(0, testWaits.signal);
}

// Whether `promise` has settled by the time already-queued work has run (a macrotask later).
async function isSettled(promise) {
  const marker = Symbol('pending');
  const result = await Promise.race([
    promise.then(() => true, () => true),
    new Promise((resolve) => setImmediate(() => resolve(marker))),
  ]);
  return result !== marker;
}

// Call once at the top level of a test file: if, after its last test, something (a leaked wait in
// the addon, say) keeps the process alive for `ms` more, it exits with code 1, which the runner
// reports as a failure of the file, rather than the whole run hanging.
function exitIfKeptAlive(ms = 5_000) {
  require('node:test').after(() => {
    setTimeout(() => {
      process.stderr.write(`the test process was kept alive ${ms} ms after its last test (a leaked wait?)\n`);
      process.exit(1);
    }, ms).unref();
  });
}

// Runs one worker per element of `workerDatas` on `file`. Resolves with the 'done' message of
// each (in order) once every worker has posted { type: 'done' } and exited with code 0. Rejects if
// a worker throws, exits without 'done' or with a non-zero code, or if they do not all finish
// within `limit` ms; the other workers are then terminated. Other messages go to `onMessage`.
function runWorkers(file, workerDatas, { limit = 30_000, onMessage } = {}) {
  return new Promise((resolve, reject) => {
    const results = new Array(workerDatas.length);
    const finished = new Array(workerDatas.length).fill(false);
    let settled = false;
    const workers = [];
    const fail = (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      for (const w of workers) w.terminate();
      reject(error);
    };
    const timer = setTimeout(
      () => fail(new Error(`hang: workers running ${path.basename(file)} did not finish in ${limit} ms`)),
      limit,
    );
    workerDatas.forEach((workerData, i) => {
      const worker = new Worker(file, { workerData });
      workers.push(worker);
      worker.on('message', (message) => {
        if (message && message.type === 'done') {
          results[i] = message;
        } else if (onMessage) {
          onMessage(message, i);
        }
      });
      worker.on('error', (error) => fail(error));
      worker.on('exit', (code) => {
        if (settled) return;
        if (results[i] === undefined) {
          fail(new Error(`worker ${i} exited (code ${code}) without posting 'done'`));
          return;
        }
        if (code !== 0) {
          fail(new Error(`worker ${i} exited with code ${code}`));
          return;
        }
        finished[i] = true;
        if (finished.every(Boolean)) {
          settled = true;
          clearTimeout(timer);
          resolve(results);
        }
      });
    });
  });
}

// A worker running an agent fixture (test/fixtures/agent.js for mutexes, rwlock_agent.js,
// semaphore_agent.js; all serve through fixtures/agent_loop.js), which performs the operations it
// is sent, in order, and replies to each.
class Agent {
  #worker;
  #seq = 0;
  #replies = new Map();
  #started = new Map();
  #gone = undefined;
  #exit;

  constructor(file, workerData) {
    this.#worker = new Worker(file, { workerData });
    // The worker's Node threadId (what errors and inspect() report), read now: it reads -1 once
    // the worker has exited. `threadId` (set when ready) is parklock's id of the thread.
    this.nodeThreadId = this.#worker.threadId;
    this.#exit = new Promise((resolve) => this.#worker.once('exit', resolve));
    this.ready = new Promise((resolve, reject) => {
      this.#worker.on('message', (message) => {
        if (message.type === 'ready') {
          this.threadId = message.threadId;
          resolve(this);
        } else if (message.type === 'started') {
          this.#started.get(message.seq)?.resolve();
          this.#started.delete(message.seq);
        } else if (message.type === 'reply') {
          const pending = this.#replies.get(message.seq);
          this.#replies.delete(message.seq);
          // A reply can still arrive after the worker failed and its calls were rejected.
          if (pending === undefined) return;
          if (message.ok) {
            pending.resolve(message.value);
          } else {
            pending.reject(Object.assign(new Error(message.error.message), message.error));
          }
        }
      });
      const gone = (why) => {
        this.#gone = why;
        reject(why);
        for (const pending of this.#replies.values()) pending.reject(why);
        for (const started of this.#started.values()) started.reject(why);
        this.#replies.clear();
        this.#started.clear();
      };
      this.#worker.on('error', gone);
      this.#worker.on('exit', (code) => gone(new Error(`agent worker exited (code ${code})`)));
    });
    this.ready.catch(() => {});
  }

  // An agent running `file` with `workerData`, once it is ready.
  static launch(file, workerData) {
    return withinLimit(new Agent(file, workerData).ready, 'agent start');
  }


  get worker() {
    return this.#worker;
  }

  // Sends op; returns { started, reply }: `started` resolves when the worker begins the op (it
  // may block in it right after), `reply` with its result.
  send(op, args = {}) {
    const seq = ++this.#seq;
    const deferred = () => {
      let resolve;
      let reject;
      const promise = new Promise((res, rej) => {
        resolve = res;
        reject = rej;
      });
      promise.catch(() => {});
      return { promise, resolve, reject };
    };
    const started = deferred();
    const reply = deferred();
    if (this.#gone !== undefined) {
      started.reject(this.#gone);
      reply.reject(this.#gone);
    } else {
      this.#started.set(seq, started);
      this.#replies.set(seq, reply);
      this.#worker.postMessage({ seq, op, args });
    }
    return { started: started.promise, reply: reply.promise };
  }

  call(op, args) {
    return withinLimit(this.send(op, args).reply, `agent ${op}`);
  }

  // Resolves once the worker has exited (after terminate() or on its own).
  get exited() {
    return this.#exit;
  }

  async terminate() {
    await this.#worker.terminate();
  }
}

// Registers, in the calling test file, an afterEach that terminates every agent its tests started,
// whatever happened; returns start(...args), which launches an agent on `file` with
// workerDataOf(...args) and waits until it is ready.
function agentsPerTest(file, workerDataOf) {
  const agents = [];
  require('node:test').afterEach(() => Promise.all(agents.splice(0).map((agent) => agent.terminate())));
  return async (...args) => {
    const agent = await Agent.launch(file, workerDataOf(...args));
    agents.push(agent);
    return agent;
  };
}

// The first 'message' of a worker, a child process or a cluster worker that `accept` takes.
function messageFrom(emitter, accept = () => true) {
  return new Promise((resolve) => {
    const listener = (message) => {
      if (!accept(message)) return;
      emitter.off('message', listener);
      resolve(message);
    };
    emitter.on('message', listener);
  });
}

// Resolves once a child process has exited (at once if it has).
function exited(child) {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', resolve));
}

// Removes a test's temporary directory. Windows removes no file that a process maps, and this
// process's regions stay mapped until the garbage collector frees their buffers: there, what is
// still mapped stays behind in the temporary directory.
function removeTemporary(directory) {
  try {
    fs.rmSync(directory, { recursive: true, force: true });
  } catch (error) {
    if (process.platform !== 'win32' || !['EPERM', 'EBUSY', 'EACCES', 'ENOTEMPTY'].includes(error.code)) throw error;
  }
}

// Whether this is Windows's Node running under Wine, whose few departures from Windows some tests
// say they leave out.
const UNDER_WINE = process.platform === 'win32' && process.env.WINELOADER !== undefined;

module.exports = {
  UNDER_WINE,
  removeTemporary,
  HANG_LIMIT_MS,
  fixture,
  wordOf,
  loadWord,
  queued,
  assertClean,
  tick,
  waitFor,
  withinLimit,
  isSettled,
  testSignal,
  abortTestWaits,
  exitIfKeptAlive,
  runWorkers,
  Agent,
  agentsPerTest,
  messageFrom,
  exited,
};
