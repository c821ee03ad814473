'use strict';
// The base class of every primitive: its place in shared memory, the addon's handle of its words,
// and the members they all have. A subclass keeps its own private copy of the words, so that its
// fast paths read them with no call.
const native = require('./native');
const { handleFor } = require('./handles');
const { attach, defineLocation, defineRegionPath } = require('./shared_memory');
const { cancelPendingWaits } = require('./async_waits');
const { rejectingMethods } = require('./promise_form');
const { invalidArgType } = require('./errors');

// The words of a primitive, and the addon's handle of them (made the first time it is needed).
let wordsOf;
let handleOf;
let acrossProcesses;

class Primitive {
  #words;
  #handle;
  #acrossProcesses;

  // `location`: the constructor forms of ./shared_memory.js; `kind`: given by a primitive that
  // waits across processes, which may then be placed in sharedMemory().
  constructor(location, layout, kind) {
    const { buffer, byteOffset, words, acrossProcesses, postable, path } = attach(location, layout, kind);
    this.#words = words;
    this.#acrossProcesses = acrossProcesses;
    // A primitive in a region whose memory is an ArrayBuffer (before Node 26) has no location to
    // post: the ArrayBuffer would be copied. A worker opens the same path itself, which what it
    // carries instead lets its constructor tell.
    if (postable) defineLocation(this, { buffer, byteOffset });
    else if (path !== undefined) defineRegionPath(this, { path, byteOffset });
  }

  static {
    wordsOf = (primitive) => primitive.#words;
    acrossProcesses = (primitive) => primitive.#acrossProcesses;
    handleOf = (primitive) =>
      (primitive.#handle ??= handleFor(primitive, primitive.#words, primitive.#words.length));
  }

  // Rejects every Promise wait that this thread queued through this object and that is still
  // pending, with `reason` (default: an Error with code ERR_PARKLOCK_CANCELLED); returns how many.
  cancelPendingWaits(reason) {
    return cancelPendingWaits(this, reason);
  }

  // How many waits are queued on it now, in every thread (a snapshot).
  get waiting() {
    return native.waiting(handleOf(this));
  }

  get hasWaiters() {
    return this.waiting > 0;
  }
}

// Completes a primitive's class: its static BYTES and ALIGN, read from the addon's layout; the
// shared `methods` it has as its own (as if written in its body); and its Promise forms, the
// methods named in `promiseForms` (./promise_form.js).
function definePrimitive(Class, layout, promiseForms, methods = {}) {
  Object.defineProperty(Class, 'BYTES', { value: layout.BYTES, enumerable: true });
  Object.defineProperty(Class, 'ALIGN', { value: layout.ALIGN, enumerable: true });
  for (const [key, value] of Object.entries(methods)) {
    Object.defineProperty(Class.prototype, key, { value, writable: true, configurable: true });
  }
  rejectingMethods(Class.prototype, ...promiseForms);
}

// The constructor arguments of a primitive that holds a value (Latch, Barrier): new X(value)
// allocates memory for it, anything else is a location. Returns { value, location }, value
// undefined for a location.
function valueOrLocation(args, name, validate) {
  const [first] = args;
  if (typeof first === 'number') return { value: validate(first, name), location: [] };
  if (first === undefined) {
    throw invalidArgType(name, 'of type number (or a location to attach to)', first);
  }
  return { value: undefined, location: args };
}

module.exports = { Primitive, wordsOf, handleOf, definePrimitive, valueOrLocation, acrossProcesses };
