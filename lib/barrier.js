'use strict';
// Barrier: a reusable barrier for a fixed number of parties in two shared words (addon/barrier.h
// documents the layout and the algorithm; the constants come from the addon). Arrivals that are
// not last and withdrawals are one Atomics.compareExchange here; the last arrival goes to the
// addon, which moves to the next generation and notifies every waiter in the same call. Waiting
// goes through the futex entries.
const native = require('./native');
const { attach, attachForInit, defineLocation, defineSize } = require('./shared_memory');
const { waitAsync: startWaitAsync } = require('./async_waits');
const { vocabulary, outcome } = require('./outcomes');
const { validateTimeout, validateAsyncOptions, validateInteger } = require('./validate');
const { invalidArgType, lockError, corrupt, TimeoutError } = require('./errors');
const { rejectingMethods } = require('./promise_form');
const { isAborted, reasonOf } = require('./signals');

const layout = native.barrierLayout;
const { STATE_INDEX, PARTIES_INDEX, GENERATION_SHIFT, ARRIVED_MASK, MAX_PARTIES, ARRIVED_LAST, WORDS } =
  layout;

const generationOf = (state) => state >>> GENERATION_SHIFT;

// What one futex step of waitAsync ended with.
const WOKEN = 'woken';
const TIMED_OUT = 'timed-out';
const STEP = vocabulary({ what: 'barrier', acquired: WOKEN, notEqual: WOKEN, timedOut: TIMED_OUT });
const stepOutcome = (settlement) => outcome(settlement, STEP);

function validateParties(parties) {
  return validateInteger(parties, 'parties', 1, MAX_PARTIES);
}

// The parties word, which init() wrote: 0 is zeroed memory, anything out of range is corrupt.
function checkedParties(words) {
  const parties = Atomics.load(words, PARTIES_INDEX);
  if (parties === 0) {
    throw lockError(
      'ERR_PARKLOCK_UNINITIALIZED',
      'The barrier memory is not initialized (its parties word is 0); create it with ' +
        'new Barrier(parties) or Barrier.init(sharedArrayBuffer, byteOffset, parties)',
    );
  }
  if (parties < 1 || parties > MAX_PARTIES) throw corrupt('barrier');
  return parties;
}

function timedOut(timeout) {
  return new TimeoutError(`Timed out after ${timeout} ms waiting at the barrier`);
}

class Barrier {
  #words;
  // The addon's handle of #words, made the first time this instance needs the addon.
  #handle;

  // new Barrier(parties) allocates its own memory for `parties` parties; new Barrier(
  // sharedArrayBuffer, byteOffset = 0) and new Barrier({ buffer, byteOffset }) use a barrier
  // already initialized in that memory.
  constructor(...args) {
    const [first] = args;
    if (typeof first === 'number') {
      validateParties(first);
      args = [];
    } else if (first === undefined) {
      throw invalidArgType('parties', 'of type number (or a location to attach to)', first);
    }
    const { buffer, byteOffset, words } = attach(args, layout);
    if (typeof first === 'number') {
      Atomics.store(words, STATE_INDEX, 0);
      Atomics.store(words, PARTIES_INDEX, first);
    }
    checkedParties(words);
    this.#words = words;
    defineLocation(this, { buffer, byteOffset });
  }

  // Writes a fresh barrier for `parties` at that location (which must not hold a barrier in use)
  // and returns it.
  static init(sharedArrayBuffer, byteOffset, parties) {
    validateParties(parties);
    const words = attachForInit(sharedArrayBuffer, byteOffset, layout);
    Atomics.store(words, STATE_INDEX, 0);
    Atomics.store(words, PARTIES_INDEX, parties);
    return new Barrier(sharedArrayBuffer, byteOffset);
  }

  get parties() {
    return checkedParties(this.#words);
  }

  // Arrives and blocks this thread until every party has arrived: true in exactly one party of
  // each generation (the last to arrive), false in the others. Throws TimeoutError if timeoutMs
  // passes first; the arrival is then withdrawn, unless the generation completed meanwhile, in
  // which case this party has passed and gets false.
  wait(timeoutMs = Infinity) {
    validateTimeout(timeoutMs, 'timeoutMs');
    const deadline = performance.now() + timeoutMs;
    const generation = this.#arrive();
    if (generation === ARRIVED_LAST) return true;
    for (;;) {
      const state = Atomics.load(this.#words, STATE_INDEX);
      if (generationOf(state) !== generation) return false;
      const remaining = deadline - performance.now();
      if (remaining <= 0) return this.#giveUp(generation, timedOut(timeoutMs));
      const settlement = native.futexWait(this.#words, STATE_INDEX, state, remaining);
      // undefined: the worker is terminating and its pending exception unwinds this call; the
      // arrival stands (addon/barrier.h).
      if (settlement === undefined) return false;
      if (stepOutcome(settlement) === TIMED_OUT) return this.#giveUp(generation, timedOut(timeoutMs));
      // Woken or NOT_EQUAL: the generation decides.
    }
  }

  // As wait(), but never blocks: resolves true in the last party to arrive, false in the others;
  // rejects with TimeoutError or signal.reason (withdrawing the arrival, unless the generation
  // completed meanwhile: then it resolves false). An already-aborted signal rejects without
  // arriving.
  waitAsync(options) {
    const { timeout, signal } = validateAsyncOptions(options);
    if (isAborted(signal)) return Promise.reject(reasonOf(signal));
    const deadline = performance.now() + timeout;
    const generation = this.#arrive();
    if (generation === ARRIVED_LAST) return Promise.resolve(true);
    return this.#waitAsync(generation, deadline, timeout, signal);
  }

  async #waitAsync(generation, deadline, timeout, signal) {
    try {
      for (;;) {
        const state = Atomics.load(this.#words, STATE_INDEX);
        if (generationOf(state) !== generation) return false;
        const remaining = deadline - performance.now();
        if (remaining <= 0) throw timedOut(timeout);
        const outcome = await startWaitAsync(
          this,
          (record) => native.futexWaitAsync(this.#words, STATE_INDEX, state, record),
          { timeout: remaining, signal },
          stepOutcome,
          TIMED_OUT,
        );
        if (outcome === TIMED_OUT) {
          if (generationOf(Atomics.load(this.#words, STATE_INDEX)) !== generation) return false;
          throw timedOut(timeout);
        }
      }
    } catch (error) {
      return this.#giveUp(generation, error);
    }
  }

  // Counts this party in the current generation: ARRIVED_LAST if it completed the generation,
  // otherwise the generation to wait for.
  #arrive() {
    const parties = checkedParties(this.#words);
    for (;;) {
      const state = Atomics.load(this.#words, STATE_INDEX);
      const arrived = state & ARRIVED_MASK;
      if (arrived >= parties) throw corrupt('barrier');
      if (arrived + 1 === parties) return native.barrierArrive((this.#handle ??= native.handle(this.#words, WORDS)));
      if (Atomics.compareExchange(this.#words, STATE_INDEX, state, state + 1) === state) {
        return generationOf(state);
      }
    }
  }

  // A waiter of `generation` stops waiting because of `error`: it withdraws its arrival and
  // throws, or, if the generation has completed, it has passed and returns false.
  #giveUp(generation, error) {
    for (;;) {
      const state = Atomics.load(this.#words, STATE_INDEX);
      // Arrived 0 in our generation number: a later generation with the same number (see
      // Limits in addon/barrier.h), so ours completed.
      if (generationOf(state) !== generation || (state & ARRIVED_MASK) === 0) return false;
      if (Atomics.compareExchange(this.#words, STATE_INDEX, state, state - 1) === state) throw error;
    }
  }
}

defineSize(Barrier, layout);
rejectingMethods(Barrier.prototype, 'waitAsync');

module.exports = { Barrier, TimeoutError };
