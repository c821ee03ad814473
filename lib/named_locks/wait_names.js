'use strict';
// What inspect() and watchdog() say of a wait on a named lock: the addon sees a thread parked on a
// record's WAKE word of some lock table; this turns it into the name and mode asked for and the
// name's holders. Every table this thread has opened registers here with its address.
const { nowTenths } = require('./wall_clock');
const { RECORD, RECORD_WORDS, RECORDS, RECORDS_AT, SLOT, STATE, MODE } = require('./table_layout');

const tables = [];

// `table` (a LockTable) whose first word lies at `address` (as the addon prints addresses). A
// table lives as long as the process (`locks`) or its LockManager; the few a process opens are kept.
function registerTable(table, address) {
  tables.push({ table, base: BigInt(address) });
}

function modeName(table, record) {
  return table.field(record, RECORD.MODE) === MODE.SHARED ? 'shared' : 'exclusive';
}

// The holders of `record`'s name, read without the table's Mutex: a snapshot, like inspect()'s.
function holdersOf(table, record) {
  const holders = [];
  const slot = table.field(record, RECORD.SLOT);
  for (let link = table.slotField(slot, SLOT.FIRST); link !== 0 && holders.length < RECORDS; ) {
    const held = link - 1;
    if (table.field(held, RECORD.STATE) !== STATE.HELD) break;
    holders.push({ pid: table.field(held, RECORD.PID), threadId: table.field(held, RECORD.THREAD), mode: modeName(table, held) });
    link = table.field(held, RECORD.NEXT);
  }
  return holders;
}

// The named-lock form of an inspect() entry whose wait is on a record's WAKE word, else the entry.
function describeNamedWait(entry) {
  const address = BigInt(entry.address);
  for (const { table, base } of tables) {
    const offset = Number(address - base) / 4 - RECORDS_AT;
    if (offset < 0 || offset >= RECORDS * RECORD_WORDS || offset % RECORD_WORDS !== RECORD.WAKE) continue;
    const record = (offset - RECORD.WAKE) / RECORD_WORDS;
    const holders = holdersOf(table, record);
    const here = holders.find((holder) => holder.pid === process.pid);
    // The addon's waitedMs starts again with each slice of the wait (./lock_waits.js).
    const waitedMs = ((nowTenths() - table.field(record, RECORD.SINCE)) | 0) / 10;
    const mode = modeName(table, record);
    return {
      ...entry,
      waiters: entry.waiters.map((waiter) => ({ ...waiter, waitedMs, request: mode })),
      kind: 'named lock',
      primitive: null,
      name: table.nameOf(table.field(record, RECORD.SLOT)),
      mode,
      path: table.path,
      holder: here === undefined ? null : here.threadId,
      holderProcess: holders.length === 0 ? null : holders[0].pid,
      holders,
    };
  }
  return entry;
}

module.exports = { registerTable, describeNamedWait };
