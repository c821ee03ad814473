'use strict';
// Semaphore: the eventually fair counting semaphore of addon/primitives/semaphore.h, whose word layout this
// file reads from the addon's exported constants. An acquire is one Atomics.compareExchange on the
// word while enough permits are free and not set aside for the waiters (the hand-off bit): it may
// take them past queued waiters (barging), which the addon bounds by its fairness interval. A
// release is one compareExchange while nobody is queued; once the waiters bit is set it goes to
// the addon, which wakes the oldest waiters to compete for the permits, or hands them over.
const native = require('./native');
const { Primitive, wordsOf, handleOf, definePrimitive } = require('./primitive');
const { tracing, traceBlockingNow } = require('./diagnostics');
const { primer } = require('./prime');
const { initAt } = require('./shared_memory');
const { definePlaceable } = require('./placeable');
const { waitAsync } = require('./async_waits');
const { vocabulary, outcome } = require('./outcomes');
const {
  validateTimeout,
  validateAsyncOptions,
  validateInteger,
  validateFunction,
} = require('./validate');
const { invalidArgType, outOfRange, corrupt } = require('./errors');
const { isAborted } = require('./signals');
const { Permits } = require('./permits');
const { runHolding } = require('./guard');

const layout = native.semaphoreLayout;
const { PERMITS_MASK, WAITERS_BIT, HAND_OFF_BIT, MAX_PERMITS, WORDS } = layout;
const SEMAPHORE = vocabulary({ what: 'semaphore', acquired: true, timedOut: false });
const { ACQUIRED } = native.settled;

// A number of permits: an integer from `min` (1 for requests and releases) to MAX_PERMITS.
function validatePermits(value, name, min = 1) {
  return validateInteger(value, name, min, MAX_PERMITS);
}

// The word, after checking that it holds a value the semaphore can have written: permits are
// only set aside for waiters while some are queued.
function checked(word) {
  if ((word & (HAND_OFF_BIT | WAITERS_BIT)) === HAND_OFF_BIT) throw corrupt('semaphore');
  return word;
}

// acquireAsync() resolves to nothing: only whether it threw matters.
function interpret(settlement) {
  outcome(settlement, SEMAPHORE);
}

class Semaphore extends Primitive {
  #word = wordsOf(this);

  // new Semaphore(initialPermits = 0) allocates; new Semaphore(sab, byteOffset) and
  // new Semaphore({ buffer, byteOffset }) attach to a semaphore that already lives there.
  constructor(...args) {
    const [first] = args;
    let initialPermits = 0;
    let location = args;
    if (typeof first === 'number') {
      initialPermits = validatePermits(first, 'initialPermits', 0);
      if (args[1] !== undefined) {
        throw invalidArgType(
          'byteOffset',
          'undefined when the first argument is a number of permits',
          args[1],
        );
      }
      location = [];
    } else if (first === null || (first !== undefined && typeof first !== 'object')) {
      throw invalidArgType(
        'initialPermits',
        'a number, a SharedArrayBuffer or { buffer, byteOffset }',
        first,
      );
    }
    super(location, layout, 'semaphore');
    if (initialPermits !== 0) Atomics.store(this.#word, 0, initialPermits);
    prime();
  }

  // Writes a semaphore with `permits` permits (and no waiters) at byteOffset of buffer and returns
  // it. Only for memory no thread is using yet: it overwrites whatever is there. In
  // sharedMemory(), places it there instead (memory.place()).
  static init(buffer, byteOffset, permits) {
    validatePermits(permits, 'permits', 0);
    const write = (words) => Atomics.store(words, 0, permits);
    initAt(buffer, byteOffset, layout, 'semaphore', { value: permits, write });
    return new Semaphore(buffer, byteOffset);
  }

  static get MAX_PERMITS() {
    return MAX_PERMITS;
  }

  // Blocks this thread until n permits are granted to it.
  acquire(n = 1) {
    validatePermits(n, 'n');
    this.#take(n, Infinity);
  }

  // Takes n permits if they are available within timeoutMs (0: only if available now and not set
  // aside for queued waiters); true if taken.
  tryAcquire(n = 1, timeoutMs = 0) {
    validatePermits(n, 'n');
    validateTimeout(timeoutMs, 'timeoutMs');
    return timeoutMs === 0 ? this.#tryTake(n) : this.#take(n, timeoutMs);
  }

  // Resolves (to undefined) once n permits are granted to this thread; never blocks. Rejects with
  // TimeoutError or signal.reason, having taken nothing.
  acquireAsync(n = 1, options) {
    validatePermits(n, 'n');
    const { timeout, signal } = validateAsyncOptions(options);
    // The signal is checked before the CAS: an already-aborted signal must not take permits.
    if (!isAborted(signal) && this.#tryTake(n)) return Promise.resolve();
    return waitAsync(
      this,
      (record) => native.semaphoreAcquireAsync(handleOf(this), n, record),
      { timeout, signal },
      interpret,
    );
  }

  // acquire(n), returning a guard that releases the n permits once.
  acquirePermits(n = 1) {
    this.acquire(n);
    return new Permits(this, n);
  }

  // tryAcquire(n, timeoutMs), returning a guard if the permits were taken, null otherwise.
  tryAcquirePermits(n = 1, timeoutMs = 0) {
    return this.tryAcquire(n, timeoutMs) ? new Permits(this, n) : null;
  }

  // acquireAsync(n, options), resolving to a guard that releases the n permits once.
  acquirePermitsAsync(n = 1, options) {
    return this.acquireAsync(n, options).then(() => new Permits(this, n));
  }

  // Acquires n permits asynchronously, runs fn (sync or async) and always releases them; returns
  // fn's result.
  async executeLocked(fn, n = 1, options) {
    validateFunction(fn, 'fn');
    return runHolding(this.acquirePermitsAsync(n, options), fn);
  }

  // Returns n permits; the oldest queued waiters are woken for them. Throws RangeError (and
  // releases nothing) if the available permits would exceed Semaphore.MAX_PERMITS.
  release(n = 1) {
    validatePermits(n, 'n');
    let seen = Atomics.load(this.#word, 0);
    for (;;) {
      checked(seen);
      if ((seen & PERMITS_MASK) > MAX_PERMITS - n) throw this.#overflow(n, seen & PERMITS_MASK);
      if ((seen & WAITERS_BIT) !== 0) break;
      const witnessed = Atomics.compareExchange(this.#word, 0, seen, seen + n);
      if (witnessed === seen) return;
      seen = witnessed;
    }
    if (!native.semaphoreReleaseSlow(handleOf(this), n)) throw this.#overflow(n, this.available);
  }

  // Permits available right now (not counting those already granted to waiters).
  get available() {
    return checked(Atomics.load(this.#word, 0)) & PERMITS_MASK;
  }

  // The fast path: takes n permits if enough are available and not set aside for the waiters.
  #tryTake(n) {
    let seen = Atomics.load(this.#word, 0);
    for (;;) {
      checked(seen);
      if ((seen & HAND_OFF_BIT) !== 0 || (seen & PERMITS_MASK) < n) return false;
      const witnessed = Atomics.compareExchange(this.#word, 0, seen, seen - n);
      if (witnessed === seen) return true;
      seen = witnessed;
    }
  }

  // true if n permits were taken within timeoutMs: the fast path, else the addon.
  #take(n, timeoutMs) {
    return this.#tryTake(n) || this.#acquireSlow(n, timeoutMs);
  }

  // true if acquired, false if the timeout passed; throws on a corrupt word. What is not an
  // acquisition leaves the inlined part through outcome().
  #acquireSlow(n, timeoutMs) {
    const settlement = tracing()
      ? traceBlockingNow('semaphore', () => native.semaphoreAcquireSlow(handleOf(this), n, timeoutMs))
      : native.semaphoreAcquireSlow(handleOf(this), n, timeoutMs);
    return settlement === ACQUIRED || outcome(settlement, SEMAPHORE);
  }

  #overflow(n, available) {
    return outOfRange(
      'n',
      `at most ${MAX_PERMITS - available} (${available} permits are available and ` +
        `Semaphore.MAX_PERMITS is ${MAX_PERMITS})`,
      n,
    );
  }
}

definePrimitive(Semaphore, layout, ['acquireAsync', 'acquirePermitsAsync']);
definePlaceable(Semaphore, (memory, byteOffset, permits = 0) => Semaphore.init(memory, byteOffset, permits), 1);

// The round enters the slow paths on a semaphore of this thread's own: an acquisition whose time
// is already up, which the addon answers at once (acquire() shares that call), and a release of a
// word marked as having waiters, which finds nobody queued.
const prime = primer(() => {
  const semaphore = new Semaphore(new SharedArrayBuffer(WORDS * 4), 0);
  return () => {
    semaphore.tryAcquire(1, Number.MIN_VALUE);
    Atomics.or(wordsOf(semaphore), 0, WAITERS_BIT);
    semaphore.release(1);
    semaphore.acquire(1);
  };
});

module.exports = { Semaphore };
