'use strict';
// cancelPendingWaits(): rejects every Promise wait that this thread started through one primitive
// object and that is still pending (a pool shutting down, a request handler that gives up).
//
// Built on the `signal` option alone, so it needs nothing from the addon or ./async_waits.js:
// cancellable() wraps each Promise form of a primitive so that every call that may wait runs with
// a signal of ours. A wait subscribes to its signal (addEventListener) only once it is really
// queued and unsubscribes when it settles, so the subscribed waits are exactly the pending ones:
// each primitive object keeps them in a list, and cancelling them is aborting them.
//
// - A call that may wait gets a CallSignal, which combines the caller's signal (if any) with
//   cancellation: aborted if either is, with the reason of whichever came first. The caller's signal is read as often and in the same order
//   as the primitive reads it, so its getters, validation and errors behave exactly as without the
//   wrapper.
// - Latch and Barrier waits are loops of futex waits (one subscription each): such a wait counts
//   as pending from its first subscription until its Promise settles.
// - The uncontended fast path costs nothing extra: where the method has one, the wrapper runs it
//   first through the primitive's public try form and only a call that has to wait gets a signal.
const { lockError, invalidArgType } = require('./errors');
const { readProperty, hasProperty } = require('./property');
const { listen, validateSignal, isAborted, reasonOf } = require('./signals');
const { validateTimeout } = require('./validate');

const NAME = 'options.signal';

// What cancelPendingWaits() rejects with when given no reason.
function cancelled() {
  return lockError(
    'ERR_PARKLOCK_CANCELLED',
    'The wait was cancelled by cancelPendingWaits() on the primitive it waited on',
  );
}

// The pending waits of one primitive object: a doubly linked list of their CallSignals (linking
// and unlinking cost no hashing, which a Map keyed by fresh objects would pay on every wait).
class Registry {
  size = 0;
  head = { prev: null, next: null };

  constructor() {
    this.head.prev = this.head;
    this.head.next = this.head;
  }

  link(node) {
    const last = this.head.prev;
    node.prev = last;
    node.next = this.head;
    last.next = node;
    this.head.prev = node;
    this.size += 1;
  }

  unlink(node) {
    node.prev.next = node.next;
    node.next.prev = node.prev;
    node.prev = null;
    node.next = null;
    this.size -= 1;
  }

  // Cancels every pending wait, oldest first; returns how many there were.
  cancelAll(reason) {
    const waits = [];
    for (let node = this.head.next; node !== this.head; node = node.next) waits.push(node);
    this.head.prev = this.head;
    this.head.next = this.head;
    this.size = 0;
    let failure;
    let failed = false;
    for (const callSignal of waits) {
      callSignal.prev = null;
      callSignal.next = null;
      try {
        callSignal.cancelWait(reason);
      } catch (error) {
        if (!failed) failure = error;
        failed = true;
      }
    }
    if (failed) throw failure;
    return waits.length;
  }
}

const registries = new WeakMap();

function registryOf(primitive) {
  if (primitive === null || typeof primitive !== 'object') return undefined;
  let registry = registries.get(primitive);
  if (registry === undefined) {
    registry = new Registry();
    registries.set(primitive, registry);
  }
  return registry;
}

// The caller's signal `user` (or undefined) combined with cancellation, for one call. One wait
// step subscribes at a time.
class CallSignal {
  // Its place in the Registry's list while it counts as pending.
  prev = null;
  next = null;
  #registry;
  #user;
  #multiStep;
  #validated;
  #cancelled = false;
  #reason;
  #listener;
  #stopForwarding;
  #registered = false;
  #closed = false;

  // `validated`: the caller's signal has been validated already.
  constructor(registry, user, multiStep, validated) {
    this.#registry = registry;
    this.#user = user;
    this.#multiStep = multiStep;
    this.#validated = validated;
  }

  // The primitive reads this first when it validates its signal: that is when the caller's
  // signal is validated, reading what ./signals.js would read, in the same order.
  get aborted() {
    if (this.#cancelled) return true;
    const user = this.#user;
    if (user === undefined) return false;
    if (this.#validated) return readProperty(user, 'aborted', NAME);
    const fail = () => invalidArgType(NAME, 'an instance of AbortSignal', user);
    if (user === null || typeof user !== 'object') throw fail();
    const aborted = readProperty(user, 'aborted', NAME);
    if (
      typeof aborted !== 'boolean' ||
      !hasProperty(user, 'reason', NAME) ||
      typeof readProperty(user, 'addEventListener', NAME) !== 'function' ||
      typeof readProperty(user, 'removeEventListener', NAME) !== 'function'
    ) {
      throw fail();
    }
    this.#validated = true;
    return aborted;
  }

  get reason() {
    if (this.#cancelled || this.#user === undefined) return this.#reason;
    return readProperty(this.#user, 'reason', NAME);
  }

  addEventListener(type, listener) {
    this.#listener = listener;
    if (this.#user !== undefined) {
      let subscribing = true;
      let firedAtOnce = false;
      this.#stopForwarding = listen(this.#user, () => {
        if (subscribing) firedAtOnce = true;
        listener();
      });
      subscribing = false;
      // The caller's signal cancelled the wait while it subscribed: it will never be queued, and
      // nobody will unsubscribe.
      if (firedAtOnce) {
        this.#listener = undefined;
        return;
      }
    }
    if (!this.#registered && !this.#closed) {
      this.#registered = true;
      this.#registry.link(this);
    }
  }

  removeEventListener(type, listener) {
    if (listener !== this.#listener) return;
    this.#listener = undefined;
    if (!this.#multiStep) this.#unregister();
    const stop = this.#stopForwarding;
    this.#stopForwarding = undefined;
    if (stop !== undefined) stop();
  }

  // For a wait of several steps: `promise` is what the method returned; the wait stops counting
  // as pending once it settles. (A subscription after this call, which no method makes, would
  // not count.)
  settledBy(promise) {
    this.#closed = true;
    if (!this.#registered) return promise;
    return promise.then(
      (value) => {
        this.#unregister();
        return value;
      },
      (error) => {
        this.#unregister();
        throw error;
      },
    );
  }

  // Called by Registry#cancelAll, which has unlinked this wait.
  cancelWait(reason) {
    this.#registered = false;
    if (this.#cancelled) return;
    this.#cancelled = true;
    this.#reason = reason;
    const listener = this.#listener;
    if (listener !== undefined) listener();
  }

  #unregister() {
    if (!this.#registered) return;
    this.#registered = false;
    this.#registry.unlink(this);
  }
}

// For a method without a fast path to run first: the options bag it gets, which reads the
// caller's options lazily, when and as often as the method reads its options (after checking its
// other arguments), so that validation and errors are unchanged.
class OptionsView {
  #registry;
  #user;
  #multiStep;
  #callSignal;

  constructor(registry, user, multiStep) {
    this.#registry = registry;
    this.#user = user;
    this.#multiStep = multiStep;
  }

  get timeout() {
    return this.#user === undefined ? undefined : readProperty(this.#user, 'timeout', 'options');
  }

  get signal() {
    const user = this.#user === undefined ? undefined : readProperty(this.#user, 'signal', 'options');
    this.#callSignal = new CallSignal(this.#registry, user, this.#multiStep, false);
    return this.#callSignal;
  }

  // What the call returns, given what the method returned.
  static settle(view, result) {
    if (!view.#multiStep || view.#callSignal === undefined) return result;
    return view.#callSignal.settledBy(result);
  }
}

// A value passed as options that the method must see as it is: it rejects it as a bad argument.
function notAnOptionsBag(options) {
  return options !== undefined && (options === null || typeof options !== 'object');
}

// Replaces prototype[key], a Promise form whose options bag is argument `optionsIndex` (0 or 1),
// with its cancellable form. `multiStep`: the method waits in several futex steps.
//
// With `tryNow`, the wrapper first does what the method itself does before it would wait, in the
// same order: checks the arguments that come before the options (`check(first)`), reads and
// validates the options, rejects if the signal has aborted, and tries the method's fast path
// through the primitive's public try form (`tryNow(primitive, first)`: the Promise the method
// would return without waiting, or undefined if it has to wait; it may throw what the method
// would reject with). Without `tryNow`, the method gets an OptionsView.
function cancellable(prototype, key, optionsIndex, { multiStep = false, check, tryNow } = {}) {
  const descriptor = Object.getOwnPropertyDescriptor(prototype, key);
  const original = descriptor.value;
  const call =
    optionsIndex === 0
      ? (primitive, first, options) => original.call(primitive, options)
      : (primitive, first, options) => original.call(primitive, first, options);

  function lazy(primitive, first, options) {
    const registry = registryOf(primitive);
    if (registry === undefined || notAnOptionsBag(options)) return call(primitive, first, options);
    const view = new OptionsView(registry, options, multiStep);
    return OptionsView.settle(view, call(primitive, first, view));
  }

  function eager(primitive, first, options) {
    if (notAnOptionsBag(options)) return call(primitive, first, options);
    let timeout = Infinity;
    let signal;
    try {
      if (check !== undefined) check(first);
      if (options !== undefined) {
        const rawTimeout = readProperty(options, 'timeout', 'options');
        const rawSignal = readProperty(options, 'signal', 'options');
        if (rawTimeout !== undefined) timeout = validateTimeout(rawTimeout, 'options.timeout');
        signal = validateSignal(rawSignal, NAME);
        if (isAborted(signal)) return Promise.reject(reasonOf(signal));
      }
      const now = tryNow(primitive, first);
      if (now !== undefined) return now;
    } catch (error) {
      return Promise.reject(error);
    }
    const registry = registryOf(primitive);
    if (registry === undefined) return call(primitive, first, options);
    const callSignal = new CallSignal(registry, signal, multiStep, true);
    const result = call(primitive, first, { timeout, signal: callSignal });
    return multiStep ? callSignal.settledBy(result) : result;
  }

  const wrap = tryNow === undefined ? lazy : eager;
  const { [key]: wrapper } =
    optionsIndex === 0
      ? {
          [key](options) {
            return wrap(this, undefined, options);
          },
        }
      : {
          [key](first, options) {
            return wrap(this, first, options);
          },
        };
  Object.defineProperty(wrapper, 'length', { value: original.length });
  Object.defineProperty(prototype, key, { ...descriptor, value: wrapper });
}

// Cancels every pending wait started through `primitive` on this thread; returns how many.
function cancelPendingWaits(primitive, reason) {
  const registry = registries.get(primitive);
  if (registry === undefined || registry.size === 0) return 0;
  return registry.cancelAll(reason === undefined ? cancelled() : reason);
}

// How many waits started through `primitive` on this thread are pending (for tests).
function pendingWaitCount(primitive) {
  return registries.get(primitive)?.size ?? 0;
}

module.exports = { cancellable, cancelPendingWaits, pendingWaitCount };
