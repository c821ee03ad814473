'use strict';
// sharedMemory(path, options): memory that several processes map from one file, in which
// primitives wait across processes. The file's layout, how it is created and how long a process
// keeps it mapped are addon/across_processes/shared_region.h's: the mapping lasts while any buffer over it (and so
// any primitive placed in it, or pending wait on one) or any waiter in the addon uses it, and goes
// once the garbage collector has freed the last of them; there is no close(), which could unmap
// memory that a primitive somewhere still points to. Remove the file with fs.rmSync() once no
// process will open it again: processes that have it mapped keep using it, and the next
// sharedMemory() at that path creates a new region that they do not see. Past the bytes asked
// for, the file holds the region's placement table (./placement_table.js), which memory.place()
// and every primitive constructed there go through.
const fs = require('node:fs');
const os = require('node:os');
const { fileURLToPath } = require('node:url');
const util = require('node:util');

const { types } = util;
const native = require('./native');
const { invalidArgType, outOfRange, lockError } = require('./errors');
const { readProperty } = require('./property');
const { validateInteger } = require('./validate');
const { tableBytes, userBytesOf } = require('./placement_table');
const { placeWith } = require('./placeable');

const { O_RDWR, O_NOFOLLOW = 0 } = fs.constants;
// Windows: the addon opens the file itself (a descriptor of Node's C runtime means nothing to the
// addon's), never through a symbolic link.
const OPENS_BY_PATH = process.platform === 'win32';
const DEFAULT_SIZE = 4096;
const MAX_BYTES = userBytesOf(native.regionMaxBytes);

let isSharedMemory;
let memoryOf;

class SharedMemory {
  #buffer;
  #path;
  #created;

  constructor(token, buffer, path, created) {
    if (token !== SharedMemory) throw invalidArgType('this constructor', 'called by sharedMemory()', token);
    this.#buffer = buffer;
    this.#path = path;
    this.#created = created;
  }

  static {
    isSharedMemory = (value) => value !== null && typeof value === 'object' && #buffer in value;
    memoryOf = (memory) => memory.#buffer;
  }

  // The region's words: a SharedArrayBuffer over the mapping where Node makes one over external
  // memory (Node 26 on), which workers can be posted; else an ArrayBuffer, which posting would
  // copy, so each thread that needs the region calls sharedMemory() with the same path. Past
  // byteLength, it holds the placement table.
  get buffer() {
    return this.#buffer;
  }

  // The bytes the user may lay out: the buffer's, less the placement table's.
  get byteLength() {
    return userBytesOf(this.#buffer.byteLength);
  }

  // The primitive `Class` at byteOffset, the same call in every process: the first to place it
  // writes its initial state (`initialValue`: a Latch's count, a Semaphore's permits (default 0),
  // a Barrier's parties), the others find it, never before it is written. A placement that
  // overlaps another, or a different kind at the same bytes, is refused (ERR_PARKLOCK_OVERLAP).
  place(byteOffset, Class, ...initialValue) {
    if (!isSharedMemory(this)) throw invalidArgType('this', 'a SharedMemory', this);
    return placeWith(this, byteOffset, Class, initialValue);
  }

  get path() {
    return this.#path;
  }

  // Whether this call made the file a region: it created it (the first process to open it), or
  // repaired a file that a creator killed before finishing had left.
  get created() {
    return this.#created;
  }
}

function regionError(code, path, message) {
  const error = lockError(code, `${message}: ${path}`);
  error.path = path;
  return error;
}

const WHY = {
  'not-regular': ['ERR_PARKLOCK_REGION_INVALID', 'Not a regular file'],
  'foreign-owner': ['ERR_PARKLOCK_REGION_OWNER', 'The file belongs to another user'],
  'too-small': ['ERR_PARKLOCK_REGION_SIZE', 'The region is smaller than the size asked for, or its file was truncated'],
  'no-table': [
    'ERR_PARKLOCK_REGION_SIZE',
    'The region has no room for its placement table past the size asked for: was it made before ' +
      'regions had one? Remove the file so that it is made anew',
  ],
  'not-a-region': ['ERR_PARKLOCK_REGION_INVALID', 'Not a parklock shared memory file'],
  unfinished: [
    'ERR_PARKLOCK_REGION_INVALID',
    'The file was left unfinished by a process that died creating it; open it with create (the default) to repair it',
  ],
  busy: [
    'ERR_PARKLOCK_REGION_BUSY',
    `Another process has been repairing this unfinished file for over ${native.regionRepairWaitMs} ms (is it stopped?)`,
  ],
  'too-many': ['ERR_PARKLOCK_REGION_LIMIT', `This process has ${native.regionMostMapped} shared memory files mapped, the most it can`],
};

// The names of the C runtime's errno values, which the addon reports (on Windows too, where
// libuv's own numbers differ from them).
const ERRNO_NAMES = new Map(Object.entries(os.constants.errno).map(([name, number]) => [number, name]));

// An error like those of node:fs for a system call of the addon that failed with `errno`.
function systemError(errno, syscall, path) {
  const code = ERRNO_NAMES.get(errno) ?? util.getSystemErrorName(-errno);
  // Windows's libuv numbers its errors otherwise, and knows no message for these.
  const known = process.platform === 'win32' ? undefined : util.getSystemErrorMessage?.(-errno);
  const error = new Error(`${code}: ${known ?? code}, ${syscall} '${path}'`);
  Object.assign(error, { errno: -errno, code, syscall, path });
  return error;
}

function refusal(why, path) {
  if (why.error === 'version') {
    return regionError(
      'ERR_PARKLOCK_REGION_VERSION',
      path,
      `The file holds a region of layout version ${why.version}; this parklock reads version ${native.regionVersion}`,
    );
  }
  if (why.error === 'mechanism') {
    const names = ['futex_waitv', 'doorbell'];
    return regionError(
      'ERR_PARKLOCK_REGION_MECHANISM',
      path,
      `The processes using the file wait across processes by ${names[why.version] ?? `mechanism ${why.version}`}, ` +
        `this one by ${native.crossProcessMechanism} (set by PARKLOCK_CROSS_PROCESS): they would not wake each other`,
    );
  }
  if (why.error === 'system') {
    return regionError('ERR_PARKLOCK_REGION_SYSTEM', path, `Mapping the file failed (errno ${why.errno})`);
  }
  const [code, message] = WHY[why.error] ?? ['ERR_PARKLOCK_REGION_INVALID', why.error];
  return regionError(code, path, message);
}

function unsupported() {
  return lockError(
    'ERR_PARKLOCK_UNSUPPORTED',
    `sharedMemory() is not available on ${process.platform}: waits across processes are built for Linux, macOS and Windows only so far`,
  );
}

function validatePath(path) {
  if (path instanceof URL) return fileURLToPath(path);
  if (typeof path !== 'string') throw invalidArgType('path', 'of type string or an instance of URL', path);
  if (path.length === 0 || path.includes('\0')) throw outOfRange('path', 'a non-empty path without NUL bytes', JSON.stringify(path));
  return path;
}

// The options bag, read as every primitive's is (./property.js): a Proxy that fails a read is a
// bad argument, not a crash without a code.
function validateOptions(options) {
  if (options === undefined) return { size: undefined, mode: 0o600, create: true };
  if (options === null || typeof options !== 'object') throw invalidArgType('options', 'an object', options);
  const read = (key, fallback) => {
    const value = readProperty(options, key, 'options');
    return value === undefined ? fallback : value;
  };
  const size = read('size', undefined);
  const mode = read('mode', 0o600);
  const create = read('create', true);
  if (size !== undefined && validateInteger(size, 'options.size', 8, MAX_BYTES) % 8 !== 0) {
    throw outOfRange('options.size', `a multiple of 8 from 8 to ${MAX_BYTES}`, size);
  }
  validateInteger(mode, 'options.mode', 0, 0o777);
  if (typeof create !== 'boolean') throw invalidArgType('options.create', 'of type boolean', create);
  return { size, mode, create };
}

// Opens the region at `path`, creating it (mode 0o600 unless told otherwise) if it does not exist
// and `create` is not false; never follows a symbolic link at `path`. A region appears at its path
// only once it is finished, so a creator killed at any moment leaves nothing behind; a file left
// unfinished otherwise is repaired by an opener that may create (addon/across_processes/shared_region.h).
function sharedMemory(path, options) {
  path = validatePath(path);
  const { size, mode, create } = validateOptions(options);
  if (!native.regionsSupported) throw unsupported();
  for (;;) {
    let result;
    let fd;
    if (OPENS_BY_PATH) {
      result = native.openRegion(path, create, size === undefined ? 0 : size + tableBytes(size));
      if (result.error === 'open') {
        const error = systemError(result.errno, 'open', path);
        if (error.code !== 'ENOENT' || !create) throw error;
        result = undefined;
      }
    } else {
      try {
        fd = fs.openSync(path, O_RDWR | O_NOFOLLOW);
      } catch (error) {
        if (error.code !== 'ENOENT' || !create) throw error;
      }
    }
    if (result === undefined && fd === undefined) {
      const user = size ?? DEFAULT_SIZE;
      result = native.createRegion(path, mode, user + tableBytes(user));
      // Another process created it first, or it was removed again: open what is there now.
      if (result.error === 'exists') continue;
      if (result.error === 'system') throw systemError(result.errno, 'open', path);
    } else if (fd !== undefined) {
      try {
        result = native.adoptRegion(fd, create, size === undefined ? 0 : size + tableBytes(size));
      } finally {
        fs.closeSync(fd);
      }
    }
    if (result.memory === undefined) throw refusal(result, path);
    if (userBytesOf(result.memory.byteLength) < 8) throw refusal({ error: 'no-table' }, path);
    return new SharedMemory(SharedMemory, result.memory, path, result.created);
  }
}

module.exports = { sharedMemory, SharedMemory, isSharedMemory, memoryOf };
