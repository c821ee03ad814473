'use strict';
// Once: a once-only initialization in one shared word (addon/primitives/once.h documents the layout and the
// algorithm; the constants come from the addon). Becoming the runner and finishing a run nobody
// waits for are one Atomics.compareExchange each here; the addon is entered only when the run is
// taken (to wait for it) or waited for (to wake the waiters).
const native = require('./native');
const { definePlaceable } = require('./placeable');
const { Primitive, wordsOf, handleOf, definePrimitive, acrossProcesses } = require('./primitive');
const { traceBlocking } = require('./diagnostics');
const { threadId, waitAsync } = require('./async_waits');
const { vocabulary, outcome } = require('./outcomes');
const { validateFunction, validateAsyncOptions } = require('./validate');
const { corrupt, OwnerDiedError } = require('./errors');
const { isAborted, reasonOf } = require('./signals');
const { endedHolder, HERE, UNKNOWN } = require('./ended_holder');

const layout = native.onceLayout;
const { NOT_DONE, DONE, RUNNING, RUNNER_SHIFT } = layout;
const { OWNER_DIED } = native.settled;
// This thread's word while it runs the initializer and nobody waits (a once in sharedMemory()
// names this thread by its identity in that region instead).
const RUN_BY_ME = (threadId << RUNNER_SHIFT) | RUNNING;

// What a begin that found the run taken comes back with: DONE_NOW (completed meanwhile: nothing to
// run), RUN (this caller runs the initializer), or an OwnerDiedError (RUN, after a runner that
// ended).
const DONE_NOW = Symbol('done');
const RUN = Symbol('run');
const ONCE = vocabulary({
  what: 'once',
  acquired: DONE_NOW,
  leader: RUN,
  deadlock:
    "This thread is running this once's initializer (a pending runAsync() of this thread was " +
    'handed it, or run() was called from inside it); waiting for it would wait forever',
});

// `holders`: who a runner that ended was (./ended_holder.js).
function turnOf(settlement, holders) {
  if (settlement === OWNER_DIED) return new OwnerDiedError('once', null, endedHolder(holders));
  return outcome(settlement, ONCE);
}

class Once extends Primitive {
  #word = wordsOf(this);
  // RUN_BY_ME, or in sharedMemory() this thread's word there.
  #runByMe = acrossProcesses(this) ? (native.regionIdentity(this.#word) << RUNNER_SHIFT) | RUNNING : RUN_BY_ME;
  // Who a runner that ended was: a thread of this process, or in sharedMemory() not looked at.
  #runners = acrossProcesses(this) ? UNKNOWN : HERE;
  #turnOf = (settlement) => turnOf(settlement, this.#runners);

  // new Once() allocates its own memory; new Once(sharedArrayBuffer, byteOffset = 0) and
  // new Once({ buffer, byteOffset }) use a once already in that memory (zeroed: not done).
  constructor(...location) {
    super(location, layout, 'once');
  }

  // Whether the initializer has completed (a snapshot; once true, true for good).
  get done() {
    return Atomics.load(this.#word, 0) === DONE;
  }

  // Runs fn unless the initializer has completed, blocking while another call runs it; true if
  // this call ran it to completion, false if it was done already. fn is called with an
  // OwnerDiedError when the previous run's thread ended before completing it (else undefined).
  // If fn throws, the once is not done: the error is rethrown and the next caller runs its fn.
  run(fn) {
    validateFunction(fn, 'fn');
    const seen = Atomics.compareExchange(this.#word, 0, NOT_DONE, this.#runByMe);
    if (seen === DONE) return false;
    let previousRunDied;
    if (seen !== NOT_DONE) {
      const turn = this.#turnOf(traceBlocking('once', () => native.onceBeginSlow(this.#native, Infinity)));
      if (turn === DONE_NOW) return false;
      if (turn !== RUN) previousRunDied = turn;
    }
    try {
      fn(previousRunDied);
    } catch (error) {
      this.#finish(false);
      throw error;
    }
    this.#finish(true);
    return true;
  }

  // The same without blocking the thread: fn may be async, and the run completes when its Promise
  // fulfils (it fails if it rejects). Resolves true if this call ran it to completion, false if it
  // was done already; rejects with fn's error. `timeout` and `signal` bound the wait for another
  // call's run (TimeoutError, signal.reason), never fn's own run.
  runAsync(fn, options) {
    validateFunction(fn, 'fn');
    const { timeout, signal } = validateAsyncOptions(options);
    // The signal is checked before the CAS: an already-aborted call must not take the run.
    if (isAborted(signal)) return Promise.reject(reasonOf(signal));
    const seen = Atomics.compareExchange(this.#word, 0, NOT_DONE, this.#runByMe);
    if (seen === DONE) return Promise.resolve(false);
    if (seen === NOT_DONE) return this.#runAsync(fn, undefined);
    return waitAsync(
      this,
      (record) => native.onceBeginAsync(this.#native, record),
      { timeout, signal },
      this.#turnOf,
    ).then((turn) => (turn === DONE_NOW ? false : this.#runAsync(fn, turn === RUN ? undefined : turn)));
  }

  async #runAsync(fn, previousRunDied) {
    try {
      await fn(previousRunDied);
    } catch (error) {
      this.#finish(false);
      throw error;
    }
    this.#finish(true);
    return true;
  }

  // Ends this thread's run: done for good, or not done; the addon wakes the waiters, if any.
  #finish(success) {
    const after = success ? DONE : NOT_DONE;
    const mine = this.#runByMe;
    if (Atomics.compareExchange(this.#word, 0, mine, after) === mine) return;
    // Only this thread ends its run: a word that no longer names it was overwritten.
    if (!native.onceFinishSlow(this.#native, success)) throw corrupt('once');
  }

  get #native() {
    return handleOf(this);
  }
}

definePrimitive(Once, layout, ['runAsync']);
definePlaceable(Once, (memory, byteOffset) => new Once(memory, byteOffset));

module.exports = { Once };
