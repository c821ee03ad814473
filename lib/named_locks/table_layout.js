'use strict';
// The layout of a lock table: the shared memory behind a LockManager, in which every thread (and,
// in a file, every process) that uses the manager keeps its names and requests. All zero is an
// empty table, so a table needs no initialisation that another thread or process could observe
// half done: entries are taken from a high-water mark the first time and from a free list after.
//
// All fields are Int32 words; indexes stored in links are index + 1, 0 meaning none.
//
//   header (HEADER_WORDS)
//     [0] MUTEX         the table's Mutex: every field below is read and written holding it, except
//                       a record's STATE and ACKNOWLEDGED (see below)
//     [1] MAGIC         0 until the first user writes MAGIC_VALUE; anything else: not a lock table
//     [2] SLOTS_USED    high-water mark of name slots      [3] FREE_SLOT    free slot list
//     [4] RECORDS_USED  high-water mark of records         [5] FREE_HEAD / [6] FREE_TAIL: the
//                       free record list, oldest first (a freed record is reused last, see
//                       lock_table.js: allocate())
//     [7] SEQUENCE      the arrival number of the last request
//     [8] IDLE_NEXT     where the next entry of the idle ring goes
//   idle ring (IDLE_RING × 2 words): { slot + 1, its GENERATION } of the names that most recently
//                       became unused, which keep their slots until pushed out of the ring
//   buckets (BUCKETS words): the first slot of each hash chain
//   slots (SLOTS × SLOT_WORDS): one per name that some request holds or waits for
//     [0] NEXT          next slot of the chain, or of the free list
//     [1] GENERATION    counts the slot's reuses
//     [2] LENGTH        the name's length in UTF-16 code units (0: free)
//     [3] HASH
//     [4] FIRST / [5] LAST  the queue: the name's records in order, held ones first
//     [6] FIRST_PENDING the first record of the queue that waits
//     [7] HELD          how many records hold the name
//     [8] EXCLUSIVE     1 while the holder holds it exclusively
//     [9] DIED          1 after a holder ended holding it, until the next grant reports it:
//                       [10] DEAD_PID, [11] DEAD_THREAD say whose
//     [12..] NAME       the name's UTF-16 code units, two to a word
//   records (RECORDS × RECORD_WORDS): one per request that holds or waits for a name
//     [0] LIVENESS      a Mutex that the requesting thread holds while the record is in use: the
//                       first waiter of a name learns of a holder's end by taking it over (the
//                       Mutex's owner death, in this process or another)
//     [1] WAKE          a Semaphore the requester waits on: released by its grant, and by its
//                       becoming the first waiter
//     [2] STATE         FREE, PENDING, HELD, STOLEN, or KEPT: out of every list, kept by the
//                       requester's thread (with its LIVENESS) for its next request (Atomics: the
//                       requester reads it unlocked)
//     [3] SLOT          its name's slot
//     [4] MODE          EXCLUSIVE or SHARED
//     [5] PREV / [6] NEXT  in the name's queue, or NEXT in the free list
//     [7] GENERATION    counts the record's reuses
//     [8] PID / [9] THREAD  the requester
//     [10] ACKNOWLEDGED the requester has seen its grant (Atomics): a record granted after its
//                       requester ended was never held by anyone, and its end is not reported
//     [11] BLOCKING     1: the requester waits blocked (lock()), so it is a step of a deadlock
//     [12] DIED / [13] DEAD_PID / [14] DEAD_THREAD  what its grant reports about the holder before
//     [15] SEQUENCE     its arrival number: the order a rebuild restores
//     [16] SINCE        when it began to wait, in tenths of a millisecond of the wall clock
//                       (wrapping): a request first in line for 1 ms is handed the name, and
//                       no later request takes it first
const MAX_NAME_UNITS = 256;

const HEADER = Object.freeze({
  MUTEX: 0,
  MAGIC: 1,
  SLOTS_USED: 2,
  FREE_SLOT: 3,
  RECORDS_USED: 4,
  FREE_HEAD: 5,
  FREE_TAIL: 6,
  SEQUENCE: 7,
  IDLE_NEXT: 8,
});
const IDLE_RING = 64;
const IDLE_AT = 16;
const HEADER_WORDS = IDLE_AT + IDLE_RING * 2;
const MAGIC_VALUE = 0x4c4b5401; // "LKT", version 1

const SLOT = Object.freeze({
  NEXT: 0,
  GENERATION: 1,
  LENGTH: 2,
  HASH: 3,
  FIRST: 4,
  LAST: 5,
  FIRST_PENDING: 6,
  HELD: 7,
  EXCLUSIVE: 8,
  DIED: 9,
  DEAD_PID: 10,
  DEAD_THREAD: 11,
  NAME: 12,
});
const SLOT_WORDS = SLOT.NAME + MAX_NAME_UNITS / 2;

const RECORD = Object.freeze({
  LIVENESS: 0,
  WAKE: 1,
  STATE: 2,
  SLOT: 3,
  MODE: 4,
  PREV: 5,
  NEXT: 6,
  GENERATION: 7,
  PID: 8,
  THREAD: 9,
  ACKNOWLEDGED: 10,
  BLOCKING: 11,
  DIED: 12,
  DEAD_PID: 13,
  DEAD_THREAD: 14,
  SEQUENCE: 15,
  SINCE: 16,
});
const RECORD_WORDS = 20;

const STATE = Object.freeze({ FREE: 0, PENDING: 1, HELD: 2, STOLEN: 3, KEPT: 4 });
const MODE = Object.freeze({ EXCLUSIVE: 0, SHARED: 1 });

// Capacities: names held or waited for at once, and requests at once. A table of these sizes
// fits the process's block (binding/process_memory.h); in a file, pages never touched stay holes.
const SLOTS = 16384;
const RECORDS = 16384;
const BUCKETS = 16384;

const BUCKETS_AT = HEADER_WORDS;
const SLOTS_AT = BUCKETS_AT + BUCKETS;
const RECORDS_AT = SLOTS_AT + SLOTS * SLOT_WORDS;
const TABLE_WORDS = RECORDS_AT + RECORDS * RECORD_WORDS;
const TABLE_BYTES = TABLE_WORDS * 4;

module.exports = {
  MAX_NAME_UNITS,
  HEADER,
  HEADER_WORDS,
  IDLE_RING,
  IDLE_AT,
  MAGIC_VALUE,
  SLOT,
  SLOT_WORDS,
  RECORD,
  RECORD_WORDS,
  STATE,
  MODE,
  SLOTS,
  RECORDS,
  BUCKETS,
  BUCKETS_AT,
  SLOTS_AT,
  RECORDS_AT,
  TABLE_WORDS,
  TABLE_BYTES,
};
