'use strict';
// Where a primitive's words live. Every primitive accepts the same three constructor forms:
//   new X()                        allocates its own zeroed SharedArrayBuffer
//   new X(sharedArrayBuffer, byteOffset = 0)
//   new X({ buffer, byteOffset })  what an instance becomes after postMessage / workerData
const { invalidArgType, outOfRange } = require('./errors');

function isSharedArrayBuffer(value) {
  // Works across realms (vm contexts), unlike instanceof.
  return Object.prototype.toString.call(value) === '[object SharedArrayBuffer]';
}

// A `{ buffer, byteOffset }` record rather than memory itself.
function isLocation(value) {
  return (
    value !== null &&
    typeof value === 'object' &&
    !isSharedArrayBuffer(value) &&
    !(value instanceof ArrayBuffer) &&
    !ArrayBuffer.isView(value)
  );
}

// Returns { buffer, byteOffset, words } where `words` is an Int32Array over exactly the
// primitive's `layout.WORDS` words.
function attach(args, layout) {
  let [buffer, byteOffset = 0] = args;
  if (buffer === undefined) {
    buffer = new SharedArrayBuffer(layout.BYTES);
  } else if (isLocation(buffer)) {
    if (args[1] !== undefined) {
      throw invalidArgType('byteOffset', 'undefined when the first argument is { buffer, byteOffset }', args[1]);
    }
    ({ buffer, byteOffset = 0 } = buffer);
  }
  if (!isSharedArrayBuffer(buffer)) {
    const hint = buffer instanceof ArrayBuffer ? ' (an ArrayBuffer cannot be shared between threads)' : '';
    throw invalidArgType('buffer', `a SharedArrayBuffer${hint}`, buffer);
  }
  if (typeof byteOffset !== 'number') throw invalidArgType('byteOffset', 'of type number', byteOffset);
  if (!Number.isInteger(byteOffset) || byteOffset < 0 || byteOffset % layout.ALIGN !== 0) {
    throw outOfRange('byteOffset', `a non-negative integer multiple of ${layout.ALIGN}`, byteOffset);
  }
  if (byteOffset + layout.BYTES > buffer.byteLength) {
    throw outOfRange(
      'byteOffset',
      `at most ${buffer.byteLength - layout.BYTES} so that ${layout.BYTES} bytes fit in a buffer of ${buffer.byteLength}`,
      byteOffset,
    );
  }
  return { buffer, byteOffset, words: new Int32Array(buffer, byteOffset, layout.WORDS) };
}

// The words at (buffer, byteOffset) for a static X.init(), which writes a new primitive there:
// only real memory will do, not a { buffer, byteOffset } record of an existing one.
function attachForInit(buffer, byteOffset, layout) {
  if (!isSharedArrayBuffer(buffer)) throw invalidArgType('buffer', 'a SharedArrayBuffer', buffer);
  return attach([buffer, byteOffset], layout).words;
}

// Makes `buffer` and `byteOffset` plain enumerable data properties, so that structured cloning
// (postMessage, workerData) carries exactly what the `{ buffer, byteOffset }` form needs.
function defineLocation(target, { buffer, byteOffset }) {
  Object.defineProperty(target, 'buffer', { value: buffer, enumerable: true });
  Object.defineProperty(target, 'byteOffset', { value: byteOffset, enumerable: true });
}

// Gives a primitive's class its static BYTES and ALIGN, read from the addon's layout.
function defineSize(Class, layout) {
  Object.defineProperty(Class, 'BYTES', { value: layout.BYTES, enumerable: true });
  Object.defineProperty(Class, 'ALIGN', { value: layout.ALIGN, enumerable: true });
}

module.exports = { attach, attachForInit, defineLocation, defineSize };
