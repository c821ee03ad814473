'use strict';
// Latch: a single-use countdown latch in one shared word (addon/primitives/latch.h documents the layout and
// the algorithm; the constants come from the addon). Count-downs that leave the count above 0 are
// one Atomics.compareExchange here; the one that opens the latch goes to the addon, which notifies
// every waiter in the same call. Waits that find the latch closed run in the addon
// (LatchWord::wait, and its asynchronous form).
const native = require('./native');
const { Primitive, wordsOf, handleOf, definePrimitive, valueOrLocation } = require('./primitive');
const { traceBlocking } = require('./diagnostics');
const { initAt } = require('./shared_memory');
const { definePlaceable } = require('./placeable');
const { waitAsync: startWaitAsync } = require('./async_waits');
const { vocabulary, outcome } = require('./outcomes');
const { validateTimeout, validateAsyncOptions, validateInteger } = require('./validate');
const { invalidArgType, outOfRange, corrupt } = require('./errors');

const layout = native.latchLayout;
const { COUNT_INDEX, MAX_COUNT } = layout;

// A wait: true once the latch is open, false if it timed out.
const LATCH = vocabulary({ what: 'latch', acquired: true, timedOut: false });
const opened = (settlement) => outcome(settlement, LATCH);

function validateCount(count, name) {
  return validateInteger(count, name, 0, MAX_COUNT);
}

// `count`, read from the word: no operation writes a negative one.
function checked(count) {
  if (count < 0) throw corrupt('latch');
  return count;
}

class Latch extends Primitive {
  #word = wordsOf(this);

  // new Latch(count) allocates its own memory holding `count`; new Latch(sharedArrayBuffer,
  // byteOffset = 0) and new Latch({ buffer, byteOffset }) use a latch already in that memory
  // (zeroed memory is an open latch).
  constructor(...args) {
    const { value: count, location } = valueOrLocation(args, 'count', validateCount);
    super(location, layout, 'latch');
    if (count !== undefined) Atomics.store(this.#word, COUNT_INDEX, count);
    else checked(Atomics.load(this.#word, COUNT_INDEX));
  }

  // Writes `count` at that location (which must not hold a latch in use) and returns the latch;
  // in sharedMemory(), places it there (memory.place()).
  static init(sharedArrayBuffer, byteOffset, count) {
    validateCount(count, 'count');
    const write = (words) => Atomics.store(words, COUNT_INDEX, count);
    initAt(sharedArrayBuffer, byteOffset, layout, 'latch', { value: count, write });
    return new Latch(sharedArrayBuffer, byteOffset);
  }

  get count() {
    return checked(Atomics.load(this.#word, COUNT_INDEX));
  }

  // Takes n (default 1) off the count; the count-down that reaches 0 releases every waiter.
  countDown(n = 1) {
    if (typeof n !== 'number') throw invalidArgType('n', 'of type number', n);
    if (!Number.isInteger(n) || n < 1) throw outOfRange('n', 'a positive integer', n);
    for (;;) {
      const count = checked(Atomics.load(this.#word, COUNT_INDEX));
      if (n > count) {
        throw outOfRange('n', `a positive integer at most the remaining count (${count})`, n);
      }
      if (n === count) {
        native.latchCountDown(handleOf(this), n);
        return;
      }
      if (Atomics.compareExchange(this.#word, COUNT_INDEX, count, count - n) === count) return;
    }
  }

  // true if the latch is open (the count is 0); never waits.
  tryWait() {
    return this.count === 0;
  }

  // Blocks this thread until the latch opens (true) or timeoutMs passes (false).
  wait(timeoutMs = Infinity) {
    validateTimeout(timeoutMs, 'timeoutMs');
    if (this.count === 0) return true;
    const settlement = traceBlocking('latch', () => native.latchWait(handleOf(this), timeoutMs));
    // undefined: the worker is terminating and its pending exception unwinds this call.
    return settlement !== undefined && opened(settlement);
  }

  // Resolves true once the latch opens, false if `timeout` passes first; rejects with
  // signal.reason if aborted. Never blocks the thread.
  waitAsync(options) {
    const { timeout, signal } = validateAsyncOptions(options);
    if (signal === undefined && this.count === 0) return Promise.resolve(true);
    return startWaitAsync(
      this,
      (record) => native.latchWaitAsync(handleOf(this), record),
      { timeout, signal },
      opened,
      false,
    );
  }
}

definePrimitive(Latch, layout, ['waitAsync']);
definePlaceable(Latch, (memory, byteOffset, count) => Latch.init(memory, byteOffset, count), 1);

module.exports = { Latch };
