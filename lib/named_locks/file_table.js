'use strict';
// The table of `new LockManager(path)`: a region file (../shared_region.js) that every process
// opening the path maps. An all-zero table is an empty one, so neither the creator nor anyone else
// initialises anything: a process that opens the file while another creates it finds a table it
// can use, and a creator killed at any moment leaves nothing half made (the region itself appears
// at its path only once it is finished).
const { sharedMemory } = require('../shared_region');
const { LockTable } = require('./lock_table');
const { TABLE_WORDS, TABLE_BYTES } = require('./table_layout');
const { notALockFile, noLockFiles } = require('./named_lock_errors');

function openFileTable(path, mode) {
  let memory;
  try {
    memory = sharedMemory(path, { size: TABLE_BYTES, mode });
  } catch (error) {
    // A region of another size: a sharedMemory() file, or a lock file of another layout.
    if (error?.code === 'ERR_PARKLOCK_REGION_SIZE') throw notALockFile(path, error);
    if (error?.code === 'ERR_PARKLOCK_UNSUPPORTED') throw noLockFiles(error);
    throw error;
  }
  const table = new LockTable(new Int32Array(memory.buffer, 0, TABLE_WORDS), (Class, word) => memory.place(word * 4, Class), memory.path);
  if (!table.isLockTable()) throw notALockFile(memory.path);
  return table;
}

module.exports = { openFileTable };
