'use strict';
// The table of `locks`, the process's own lock manager: in the process's block of memory
// (binding/process_memory.h), which every thread reaches through the addon, so that the main
// thread and every worker share its names without anything being posted.
const native = require('../native');
const { markProcessMemory } = require('../shared_memory');
const { LockTable } = require('./lock_table');
const { TABLE_WORDS, TABLE_BYTES } = require('./table_layout');

function openProcessTable() {
  const buffer = native.processMemory();
  if (buffer.byteLength < TABLE_BYTES) throw new Error('The process lock table does not fit its memory');
  markProcessMemory(buffer);
  return new LockTable(new Int32Array(buffer, 0, TABLE_WORDS), (Class, word) => new Class(buffer, word * 4));
}

module.exports = { openProcessTable };
