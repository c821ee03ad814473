'use strict';
// The placement table of a region (sharedMemory()): which byte ranges hold which primitive, so
// that no process ever sees a primitive before its initial state is written, and no two
// placements overlap. It fills the last TABLE_BYTES of the file's user area, past the bytes that
// sharedMemory() was asked for, which stay the user's; a Mutex at its first word guards it, so a
// placer killed while it holds the table leaves it to the next, as any Mutex there does.
//
// Layout (Int32 words from the table's start; a fresh file's zeros are an empty table):
//   0           the table's Mutex
//   1           format: 0 until the first placement, FORMAT from then on; anything else is
//               not a table (a file whose users wrote past the bytes they asked for)
//   2           count: how many entries are recorded
//   3           zero
//   4 + 4 * i   entry i: byte offset, byte length, kind code (KINDS), initial value
//
// Invariants: entries are written and read only under the table's Mutex. A placement writes the
// primitive's initial state first, then its entry, then the count, whose store records it: a
// placer killed before that store leaves no record, and the next placer there writes the state
// anew. So every recorded entry describes initialised words, and no two recorded ranges overlap.
const { lockError, corrupt } = require('./errors');

const TABLE_BYTES = 32768;
const HEADER_WORDS = 4;
const ENTRY_WORDS = 4;
const CAPACITY = (TABLE_BYTES / 4 - HEADER_WORDS) / ENTRY_WORDS;
const FORMAT = 1;
const [LOCK, FORMAT_INDEX, COUNT] = [0, 1, 2];

// Kind codes are indexes here plus one, so 0 is never a kind.
const KINDS = ['mutex', 'condition', 'semaphore', 'rwlock', 'latch', 'barrier', 'once'];
const NAMES = ['Mutex', 'Condition', 'Semaphore', 'RWLock', 'Latch', 'Barrier', 'Once'];
// Kinds whose zeroed words are a fresh primitive: placing one writes nothing.
const ZEROED_IS_FRESH = new Set(['mutex', 'condition', 'rwlock', 'once']);
const FRESH_AT_ZERO = { value: 0, write() {} };

// What the table's own Mutex is constructed from: the table cannot record its own lock.
class TableLockLocation {
  constructor(attachment) {
    this.attachment = attachment;
  }
}
const isTableLock = (value) => value instanceof TableLockLocation;

const nameOf = (code) => NAMES[code - 1] ?? `an unknown kind (${code})`;
const describe = ({ code, byteOffset, byteLength }) =>
  `${nameOf(code)} at bytes ${byteOffset} to ${byteOffset + byteLength - 1}`;

function placementError(code, message, request, where) {
  const error = lockError(code, `${message} (in ${where})`);
  error.placement = { kind: nameOf(request.code), byteOffset: request.byteOffset, byteLength: request.byteLength };
  return error;
}

function overlapError(request, placed, where) {
  const error = placementError(
    'ERR_PARKLOCK_OVERLAP',
    `Cannot place a ${describe(request)}: it overlaps the ${describe(placed)}, placed before`,
    request,
    where,
  );
  error.placed = { kind: nameOf(placed.code), byteOffset: placed.byteOffset, byteLength: placed.byteLength };
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

function mismatchError(request, placed, where) {
  return placementError(
    'ERR_PARKLOCK_PLACEMENT_MISMATCH',
    `The ${describe(placed)} was placed with ${placed.initial}, not ${request.initial}`,
    request,
    where,
  );
}

function entryAt(table, i) {
  const at = HEADER_WORDS + ENTRY_WORDS * i;
  return { byteOffset: table[at], byteLength: table[at + 1], code: table[at + 2], initial: table[at + 3] };
}

function record(table, i, { byteOffset, byteLength, code, initial }) {
  const at = HEADER_WORDS + ENTRY_WORDS * i;
  table.set([byteOffset, byteLength, code, initial], at);
}

// The recorded entry that `request`'s range overlaps, if any.
function overlapping(table, request) {
  const count = table[COUNT];
  if (count < 0 || count > CAPACITY) throw corrupt('placement table');
  for (let i = 0; i < count; i++) {
    const placed = entryAt(table, i);
    if (placed.byteOffset < request.byteOffset + request.byteLength &&
        request.byteOffset < placed.byteOffset + placed.byteLength) {
      return placed;
    }
  }
  return undefined;
}

function checkFormat(table, where) {
  const format = table[FORMAT_INDEX];
  if (format !== 0 && format !== FORMAT) {
    throw lockError(
      'ERR_PARKLOCK_REGION_INVALID',
      `The region's last ${TABLE_BYTES} bytes hold no placement table (format word ${format}): was ` +
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
// is (the table at `tableOffset`), or finds the one placed there before, in any process; returns
// its words. `initial`: { value, write(words) }, what the first placer writes; undefined for a
// caller that only attaches, which zeroed-is-fresh kinds need not be. `where` names the region.
function placeInRegion({ buffer, tableOffset, byteOffset, layout, kind, initial, where }) {
  initial ??= ZEROED_IS_FRESH.has(kind) ? FRESH_AT_ZERO : undefined;
  const request = { byteOffset, byteLength: layout.BYTES, code: KINDS.indexOf(kind) + 1, initial: initial?.value };
  const words = new Int32Array(buffer, byteOffset, layout.WORDS);
  const table = new Int32Array(buffer, tableOffset, TABLE_BYTES / 4);
  const { Mutex } = require('./mutex');
  const lock = new Mutex(new TableLockLocation({
    buffer,
    byteOffset: tableOffset,
    words: table.subarray(LOCK, LOCK + 1),
    acrossProcesses: true,
    postable: false,
  }));
  lockTable(lock);
  try {
    checkFormat(table, where);
    const placed = overlapping(table, request);
    if (placed !== undefined) {
      if (placed.code !== request.code || placed.byteOffset !== byteOffset) throw overlapError(request, placed, where);
      if (initial !== undefined && initial !== FRESH_AT_ZERO && placed.initial !== initial.value) {
        throw mismatchError(request, placed, where);
      }
      return words;
    }
    if (initial === undefined) throw notPlacedError(request, where);
    const count = table[COUNT];
    if (count === CAPACITY) {
      throw placementError(
        'ERR_PARKLOCK_PLACEMENT_LIMIT',
        `Cannot place a ${describe(request)}: the region's table holds ${CAPACITY} placements, the most it can`,
        request,
        where,
      );
    }
    initial.write(words);
    record(table, count, request);
    Atomics.store(table, FORMAT_INDEX, FORMAT);
    Atomics.store(table, COUNT, count + 1);
    return words;
  } finally {
    lock.unlock();
  }
}

module.exports = { TABLE_BYTES, CAPACITY, placeInRegion, isTableLock };
