'use strict';
// Where a primitive's words live. Every primitive accepts the same three constructor forms:
//   new X()                        allocates its own zeroed SharedArrayBuffer
//   new X(sharedArrayBuffer, byteOffset = 0)
//   new X({ buffer, byteOffset })  what an instance becomes after postMessage / workerData
//
// Memory is recognised by V8's own type checks and measured by the built-in getters, never by
// reading the value's properties: those checks work across realms (vm contexts), and Proxies and
// objects made from the built-in prototypes, which would pass instanceof or toString checks and
// then fail inside a built-in with an error that has no `code`, are refused with one.
const { types } = require('node:util');
const { invalidArgType, outOfRange, lockError, withCode } = require('./errors');
const { isSharedMemory, memoryOf } = require('./shared_region');
const { userBytesOf, placeInRegion, isTableLock } = require('./placement_table');
const native = require('./native');

// Whether an Int32Array over a SharedArrayBuffer lies in a region.
const inRegion = native.regionsSupported ? native.inRegion : () => false;

// The buffers over the process's own block (lib/named_locks/process_table.js): ArrayBuffers, but
// over memory every thread of the process shares and that is never freed, so the addon waits on
// them as on a SharedArrayBuffer. Only parklock's own tables are placed there.
const processBuffers = new WeakSet();

function markProcessMemory(buffer) {
  processBuffers.add(buffer);
}

// Whether `buffer` is the ArrayBuffer of a region (before Node 26 a region's memory is one): the
// addon accepts no other ArrayBuffer, and refuses a region's only once it is too short to hold a
// word.
function isRegionArrayBuffer(buffer) {
  if (!native.regionsSupported || !types.isArrayBuffer(buffer)) return false;
  try {
    return inRegion(new Int32Array(buffer, 0, 1));
  } catch {
    return false;
  }
}

// What a primitive in a region that cannot be posted carries instead of its location, so that
// structured cloning brings a worker the path to open: the own property of this name.
const REGION_PATH = 'sharedMemoryPath';

// A worker was posted a primitive of `kind` in the region at `path`, which is not memory it can
// use there: before Node 26 a region's memory is an ArrayBuffer, which posting copies.
function notPostable(kind, path, byteOffset) {
  const error = new TypeError(
    `This ${kind} lives in sharedMemory(${JSON.stringify(path)}), whose memory cannot be posted to ` +
      'another thread before Node 26 (it is an ArrayBuffer, which posting copies): call ' +
      `sharedMemory(path) in the worker and construct it there from that memory, at byteOffset ${byteOffset}`,
  );
  return withCode(error, 'ERR_PARKLOCK_NOT_POSTABLE');
}

const { isSharedArrayBuffer, isAnyArrayBuffer, isArrayBufferView, isProxy, isInt32Array } = types;
const sharedByteLength = Object.getOwnPropertyDescriptor(SharedArrayBuffer.prototype, 'byteLength').get;
const TypedArrayPrototype = Object.getPrototypeOf(Int32Array.prototype);
const typedArrayBuffer = Object.getOwnPropertyDescriptor(TypedArrayPrototype, 'buffer').get;
const typedArrayLength = Object.getOwnPropertyDescriptor(TypedArrayPrototype, 'length').get;

// A `{ buffer, byteOffset }` record rather than memory itself. Not a Proxy: a location comes from
// a primitive or from structured cloning, which never makes one.
function isLocation(value) {
  return (
    value !== null &&
    typeof value === 'object' &&
    !isProxy(value) &&
    !isAnyArrayBuffer(value) &&
    !isArrayBufferView(value)
  );
}

// A location's `key`: an own data property, as structured cloning and defineLocation() make it.
// Anything else (an accessor, an inherited property) reads as undefined, so that reading a
// location runs no code: a getter inherited from a built-in prototype would throw without a code.
function locationField(record, key) {
  const descriptor = Object.getOwnPropertyDescriptor(record, key);
  return descriptor !== undefined && 'value' in descriptor ? descriptor.value : undefined;
}

// The number of Int32 elements of `value` if it is an Int32Array over a SharedArrayBuffer, else -1.
function sharedInt32Length(value) {
  if (!isInt32Array(value) || !isSharedArrayBuffer(Reflect.apply(typedArrayBuffer, value, []))) return -1;
  return Reflect.apply(typedArrayLength, value, []);
}

// Returns { buffer, byteOffset, words, acrossProcesses, postable } where `words` is an Int32Array
// over exactly the primitive's `layout.WORDS` words; `acrossProcesses` says that they lie in a
// region from sharedMemory() (./shared_region.js), which only primitives that wait across
// processes (`kind`, when given) accept, and only as placed in its table (./placement_table.js,
// `initial` as there); `postable`: the buffer is a SharedArrayBuffer, which postMessage shares
// rather than copies (a region's is one where Node makes one over external memory, Node 26 on).
function attach(args, layout, kind, initial) {
  let [buffer, byteOffset = 0] = args;
  if (isSharedMemory(buffer)) return attachRegion(buffer, byteOffset, layout, kind, initial);
  if (isTableLock(buffer)) return buffer.attachment;
  if (buffer === undefined) {
    buffer = new SharedArrayBuffer(layout.BYTES);
  } else if (isLocation(buffer)) {
    if (args[1] !== undefined) {
      throw invalidArgType('byteOffset', 'undefined when the first argument is { buffer, byteOffset }', args[1]);
    }
    const record = buffer;
    buffer = locationField(record, 'buffer');
    byteOffset = locationField(record, 'byteOffset');
    if (byteOffset === undefined) byteOffset = 0;
    if (buffer === undefined) {
      const path = locationField(record, REGION_PATH);
      if (typeof path === 'string') throw notPostable(kind ?? 'primitive', path, byteOffset);
      throw invalidArgType('buffer', 'a SharedArrayBuffer or { buffer, byteOffset }', record);
    }
  }
  if (processBuffers.has(buffer)) return attachProcessMemory(buffer, byteOffset, layout);
  if (!isSharedArrayBuffer(buffer)) {
    if (isRegionArrayBuffer(buffer)) {
      throw invalidArgType(
        'buffer',
        'a SharedArrayBuffer, or the object sharedMemory() returned (this ArrayBuffer is its ' +
          '`buffer`: pass the memory object itself, as in new X(memory, byteOffset))',
        buffer,
      );
    }
    const hint = types.isArrayBuffer(buffer) ? ' (an ArrayBuffer cannot be shared between threads)' : '';
    throw invalidArgType('buffer', `a SharedArrayBuffer${hint}`, buffer);
  }
  if (typeof byteOffset !== 'number') throw invalidArgType('byteOffset', 'of type number', byteOffset);
  if (!Number.isInteger(byteOffset) || byteOffset < 0 || byteOffset % layout.ALIGN !== 0) {
    throw outOfRange('byteOffset', `a non-negative integer multiple of ${layout.ALIGN}`, byteOffset);
  }
  const byteLength = Reflect.apply(sharedByteLength, buffer, []);
  if (byteOffset + layout.BYTES > byteLength) {
    throw outOfRange(
      'byteOffset',
      `at most ${byteLength - layout.BYTES} so that ${layout.BYTES} bytes fit in a buffer of ${byteLength}`,
      byteOffset,
    );
  }
  let words = new Int32Array(buffer, byteOffset, layout.WORDS);
  // A region's SharedArrayBuffer, given as itself or posted from another thread.
  const acrossProcesses = inRegion(words);
  if (acrossProcesses) {
    checkWaitsAcrossProcesses(kind);
    const tableOffset = userBytesOf(byteLength);
    checkRegionRange(byteOffset, layout, tableOffset);
    words = placeInRegion({ buffer, tableOffset, byteOffset, layout, kind, initial, where: 'this region' });
  }
  return { buffer, byteOffset, words, acrossProcesses, postable: true };
}

function attachProcessMemory(buffer, byteOffset, layout) {
  const words = new Int32Array(buffer, byteOffset, layout.WORDS);
  return { buffer, byteOffset, words, acrossProcesses: false, postable: false };
}

function checkWaitsAcrossProcesses(kind) {
  if (kind === undefined) {
    throw lockError(
      'ERR_PARKLOCK_UNSUPPORTED',
      'Only Mutex, Condition, Semaphore, RWLock, Latch, Barrier and Once wait across processes: ' +
        'this primitive cannot be placed in sharedMemory()',
    );
  }
}

// A region's user bytes are those before its placement table (`byteLength` of them).
function checkRegionRange(byteOffset, layout, byteLength) {
  if (!Number.isInteger(byteOffset) || byteOffset < 0 || byteOffset % layout.ALIGN !== 0 ||
      byteOffset + layout.BYTES > byteLength) {
    throw outOfRange(
      'byteOffset',
      `a multiple of ${layout.ALIGN} from 0 to ${byteLength - layout.BYTES} (the region holds ${byteLength} bytes)`,
      byteOffset,
    );
  }
}

function attachRegion(memory, byteOffset, layout, kind, initial) {
  checkWaitsAcrossProcesses(kind);
  if (typeof byteOffset !== 'number') throw invalidArgType('byteOffset', 'of type number', byteOffset);
  const buffer = memoryOf(memory);
  const tableOffset = memory.byteLength;
  checkRegionRange(byteOffset, layout, tableOffset);
  const where = memory.path;
  const words = placeInRegion({ buffer, tableOffset, byteOffset, layout, kind, initial, where });
  return { buffer, byteOffset, words, acrossProcesses: true, postable: isSharedArrayBuffer(buffer), path: where };
}

// For a static X.init(), which writes a new primitive at (buffer, byteOffset): only real memory
// will do, not a { buffer, byteOffset } record of an existing one. `initial`: { value, write(words) },
// which writes the primitive's fresh state. In a SharedArrayBuffer it overwrites what is there;
// in a region it places the primitive (./placement_table.js): written only by the first placer,
// found by the others, so that no process sees it before it is written. `kind`: as for attach().
function initAt(buffer, byteOffset, layout, kind, initial) {
  if (!isSharedArrayBuffer(buffer) && !isSharedMemory(buffer)) {
    throw invalidArgType('buffer', 'a SharedArrayBuffer or sharedMemory()', buffer);
  }
  const { words, acrossProcesses } = attach([buffer, byteOffset], layout, kind, initial);
  if (!acrossProcesses) initial.write(words);
}

// Makes `buffer` and `byteOffset` plain enumerable data properties, so that structured cloning
// (postMessage, workerData) carries exactly what the `{ buffer, byteOffset }` form needs.
function defineLocation(target, { buffer, byteOffset }) {
  Object.defineProperty(target, 'buffer', { value: buffer, enumerable: true });
  Object.defineProperty(target, 'byteOffset', { value: byteOffset, enumerable: true });
}

// In place of a location that cannot be posted (a region's ArrayBuffer, before Node 26): the
// region's path and the byte offset, which structured cloning carries to a worker, whose
// constructor then says what to do instead (notPostable()).
function defineRegionPath(target, { path, byteOffset }) {
  Object.defineProperty(target, REGION_PATH, { value: path, enumerable: true });
  Object.defineProperty(target, 'byteOffset', { value: byteOffset, enumerable: true });
}

module.exports = { attach, initAt, defineLocation, defineRegionPath, sharedInt32Length, markProcessMemory };
