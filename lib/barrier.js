'use strict';
// Barrier: a reusable barrier for a fixed number of parties in two shared words (addon/primitives/barrier.h
// documents the layout and the algorithm; the constants come from the addon). Arriving, waiting
// and withdrawing all run in the addon (BarrierWord::arrive_and_wait, and its asynchronous form),
// so the last arrival moves to the next generation and notifies every waiter in one call.
const native = require('./native');
const { Primitive, wordsOf, handleOf, definePrimitive, valueOrLocation } = require('./primitive');
const { traceBlocking } = require('./diagnostics');
const { initAt } = require('./shared_memory');
const { definePlaceable } = require('./placeable');
const { waitAsync: startWaitAsync } = require('./async_waits');
const { vocabulary, outcome } = require('./outcomes');
const { validateTimeout, validateAsyncOptions, validateInteger } = require('./validate');
const { lockError, corrupt, TimeoutError } = require('./errors');

const layout = native.barrierLayout;
const { STATE_INDEX, PARTIES_INDEX, MAX_PARTIES } = layout;

// A wait: true in the last party to arrive, false in the others that passed; TIMED_OUT (a
// blocking wait that withdrew its arrival) becomes a TimeoutError.
const TIMED_OUT = Symbol('timed out');
const BARRIER = vocabulary({ what: 'barrier', leader: true, acquired: false, timedOut: TIMED_OUT });
const passed = (settlement) => outcome(settlement, BARRIER);

function validateParties(parties, name = 'parties') {
  return validateInteger(parties, name, 1, MAX_PARTIES);
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

class Barrier extends Primitive {
  #words = wordsOf(this);

  // new Barrier(parties) allocates its own memory for `parties` parties; new Barrier(
  // sharedArrayBuffer, byteOffset = 0) and new Barrier({ buffer, byteOffset }) use a barrier
  // already initialized in that memory.
  constructor(...args) {
    const { value: parties, location } = valueOrLocation(args, 'parties', validateParties);
    super(location, layout, 'barrier');
    if (parties !== undefined) {
      Atomics.store(this.#words, STATE_INDEX, 0);
      Atomics.store(this.#words, PARTIES_INDEX, parties);
    }
    checkedParties(this.#words);
  }

  // Writes a fresh barrier for `parties` at that location (which must not hold a barrier in use)
  // and returns it; in sharedMemory(), places it there (memory.place()).
  static init(sharedArrayBuffer, byteOffset, parties) {
    validateParties(parties);
    const write = (words) => {
      Atomics.store(words, STATE_INDEX, 0);
      Atomics.store(words, PARTIES_INDEX, parties);
    };
    initAt(sharedArrayBuffer, byteOffset, layout, 'barrier', { value: parties, write });
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
    checkedParties(this.#words);
    const settlement = traceBlocking('barrier', () => native.barrierWait(handleOf(this), timeoutMs));
    // undefined: the worker is terminating and its pending exception unwinds this call; the
    // arrival stands (addon/primitives/barrier.h).
    if (settlement === undefined) return false;
    const result = passed(settlement);
    if (result === TIMED_OUT) throw timedOut(timeoutMs);
    return result;
  }

  // As wait(), but never blocks: resolves true in the last party to arrive, false in the others;
  // rejects with TimeoutError or signal.reason (withdrawing the arrival, unless the generation
  // completed meanwhile: then it resolves false). An already-aborted signal rejects without
  // arriving.
  waitAsync(options) {
    const { timeout, signal } = validateAsyncOptions(options);
    return startWaitAsync(
      this,
      (record) => {
        checkedParties(this.#words);
        return native.barrierWaitAsync(handleOf(this), record);
      },
      { timeout, signal },
      passed,
    );
  }
}

definePrimitive(Barrier, layout, ['waitAsync']);
definePlaceable(Barrier, (memory, byteOffset, parties) => Barrier.init(memory, byteOffset, parties), 1);

module.exports = { Barrier, TimeoutError };
