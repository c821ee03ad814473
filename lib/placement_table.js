'use strict';
// The placement table of a region (sharedMemory()): which bytes hold which primitive, so that no
// process ever sees a primitive before its initial state is written, and no two placements
// overlap. It lies past the bytes that sharedMemory() was asked for, which stay the user's, at the
// end of the file's user area; a Mutex at its first word guards it, so a placer killed while it
// holds the table leaves it to the next, as any Mutex there does.
//
// Layout, from the table's start (a fresh file's zeros are an empty table):
//   bytes 0-3     the table's Mutex
//   bytes 4-7     format: 0 until the first placement, FORMAT from then on; anything else is not
//                 a table (a file whose users wrote past the bytes they asked for)
//   bytes 8-15    zero
//   byte 16 + w   the map: for each 4-byte word w of the user area, the kind code (KINDS) of the
//                 primitive placed from that word on, 0 where none starts; padded to 8 bytes
//
// Invariants: the map is written and read only under the table's Mutex. A placement writes the
// primitive's initial state, then its one map byte, which records it: a placer killed before that
// store leaves no record, and the next placer there writes the state anew. So every recorded
// placement's words are initialised, and no two recorded placements overlap.
const native = require('./native');
const { lockError } = require('./errors');

const HEADER_BYTES = 16;
const FORMAT = 1;
const [LOCK, FORMAT_INDEX] = [0, 1];

// Kind codes are indexes here plus one, so 0 is never a kind.
const KINDS = ['mutex', 'condition', 'semaphore', 'rwlock', 'latch', 'barrier', 'once'];
const NAMES = ['Mutex', 'Condition', 'Semaphore', 'RWLock', 'Latch', 'Barrier', 'Once'];
const WORDS = KINDS.map((kind) => native[`${kind}Layout`].WORDS);
const MOST_WORDS = Math.max(...WORDS);
// Kinds whose zeroed words are a fresh primitive: placing one writes nothing.
const ZEROED_IS_FRESH = new Set(['mutex', 'condition', 'rwlock', 'once']);
const FRESH_AT_ZERO = { value: 0, write() {} };

// The table's bytes for a user area of `userBytes` (a multiple of 8), a multiple of 8 itself.
const tableBytes = (userBytes) => HEADER_BYTES + Math.ceil(userBytes / 4 / 8) * 8;

// The user area's bytes in a region whose buffer holds `bufferBytes`: the most, a multiple of 8,
// that leaves room for its table (for a file made here, exactly the size it was made for).
function userBytesOf(bufferBytes) {
  let user = Math.floor(((bufferBytes - HEADER_BYTES) * 0.8) / 8) * 8;
  while (user > 0 && user + tableBytes(user) > bufferBytes) user -= 8;
  while (user + 8 + tableBytes(user + 8) <= bufferBytes) user += 8;
  return Math.max(user, 0);
}

// What the table's own Mutex is constructed from: the table cannot record its own lock. Told
// apart by its private field, which runs no code of a hostile value (a revoked Proxy).
let isTableLock;
class TableLockLocation {
  #brand;
  constructor(attachment) {
    this.attachment = attachment;
  }

  static {
    isTableLock = (value) => value !== null && typeof value === 'object' && #brand in value;
  }
}

const nameOf = (code) => NAMES[code - 1] ?? `an unknown kind (${code})`;
const describe = ({ code, byteOffset }) =>
  `${nameOf(code)} at bytes ${byteOffset} to ${byteOffset + 4 * (WORDS[code - 1] ?? 1) - 1}`;
const summary = ({ code, byteOffset }) => ({ kind: nameOf(code), byteOffset, byteLength: 4 * (WORDS[code - 1] ?? 1) });

function placementError(code, message, request, where) {
  const error = lockError(code, `${message} (in ${where})`);
  error.placement = summary(request);
  return error;
}

function overlapError(request, placed, where) {
  const error = placementError(
    'ERR_PARKLOCK_OVERLAP',
    `Cannot place a ${describe(request)}: it overlaps the ${describe(placed)}, placed before`,
    request,
    where,
  );
  error.placed = summary(placed);
  return error;
}

// The initial value of each kind that has one, by name.
const VALUE_NAMES = { semaphore: 'permits', latch: 'count', barrier: 'parties' };

function notPlacedError(request, where) {
  const name = nameOf(request.code);
  const value = VALUE_NAMES[KINDS[request.code - 1]];
  return placementError(
    'ERR_PARKLOCK_NOT_PLACED',
    `No ${name} is placed at byte ${request.byteOffset} yet, and new ${name}(memory, byteOffset) ` +
      `only finds one: place it with memory.place(${request.byteOffset}, ${name}, ${value}), the ` +
      `same call in every process (the first writes the ${value}, the others find it)`,
    request,
    where,
  );
}

// The placement other than one of the same kind at the same word that `request` would overlap:
// one that starts within its words, or before them and reaches into them.
function overlapping(map, request) {
  const first = request.byteOffset / 4;
  const words = WORDS[request.code - 1];
  for (let w = Math.max(0, first - MOST_WORDS + 1); w < first + words; w++) {
    const code = map[w];
    if (code === 0 || (w === first && code === request.code)) continue;
    if (w >= first || w + (WORDS[code - 1] ?? 1) > first) return { code, byteOffset: 4 * w };
  }
  return undefined;
}

function checkFormat(header, where) {
  const format = header[FORMAT_INDEX];
  if (format !== 0 && format !== FORMAT) {
    throw lockError(
      'ERR_PARKLOCK_REGION_INVALID',
      `The region's bytes past memory.byteLength hold no placement table (format word ${format}): was ` +
        `memory.buffer written past memory.byteLength? (in ${where})`,
    );
  }
}

function lockTable(lock) {
  try {
    lock.lock();
  } catch (error) {
    // The lock is ours, and the table as a killed placer left it is consistent (the invariants).
    if (error?.code !== 'ERR_PARKLOCK_OWNER_DIED') throw error;
  }
}

// Places a primitive of `kind` and `layout` at `byteOffset` of the region whose memory `buffer`
// is (the table at `tableOffset`, for `tableOffset` user bytes), or finds the one placed there
// before, in any process; returns its words. `initial`: { value, write(words) }, what the first
// placer writes (a later placer's value is not compared: the first one's stands); undefined for
// a caller that only attaches, which zeroed-is-fresh kinds need not be. `where` names the region.
function placeInRegion({ buffer, tableOffset, byteOffset, layout, kind, initial, where }) {
  initial ??= ZEROED_IS_FRESH.has(kind) ? FRESH_AT_ZERO : undefined;
  const request = { byteOffset, code: KINDS.indexOf(kind) + 1 };
  const words = new Int32Array(buffer, byteOffset, layout.WORDS);
  const header = new Int32Array(buffer, tableOffset, HEADER_BYTES / 4);
  const map = new Uint8Array(buffer, tableOffset + HEADER_BYTES, tableOffset / 4);
  // Placed already, as asked: a map byte is written once, after the primitive's initial state, and
  // never changes, so it is read without the table's lock. Taking the lock would give this thread
  // its region identity, which may be a dead holder's slot, before the primitive could see who
  // that holder was (./ended_holder.js).
  if (Atomics.load(header, FORMAT_INDEX) === FORMAT && Atomics.load(map, byteOffset / 4) === request.code &&
      overlapping(map, request) === undefined) {
    return words;
  }
  const { Mutex } = require('./mutex');
  const lock = new Mutex(new TableLockLocation({
    buffer,
    byteOffset: tableOffset,
    words: header.subarray(LOCK, LOCK + 1),
    acrossProcesses: true,
    postable: false,
  }));
  lockTable(lock);
  try {
    checkFormat(header, where);
    const placed = overlapping(map, request);
    if (placed !== undefined) throw overlapError(request, placed, where);
    if (map[byteOffset / 4] === request.code) return words;
    if (initial === undefined) throw notPlacedError(request, where);
    initial.write(words);
    Atomics.store(header, FORMAT_INDEX, FORMAT);
    Atomics.store(map, byteOffset / 4, request.code);
    return words;
  } finally {
    lock.unlock();
  }
}

module.exports = { tableBytes, userBytesOf, placeInRegion, isTableLock };
