'use strict';
// What the measurements of one run share in the parent: a temporary folder (lock files, counter
// files, the region's file, the C helper) and the region, handed out a slice per measurement.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { sharedMemory } = require('../../lib');
const { SLICE_BYTES } = require('./layout');

function createContext(options) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parklock-xproc-'));
  const region = path.join(dir, 'region.locks');
  let memory;
  let slices = 0;
  let used = 0;
  return {
    dir,
    region,
    options,
    // Sized once the cases are known: one slice per measurement the run can make.
    createRegion(count) {
      slices = count;
      memory = sharedMemory(region, { size: SLICE_BYTES * count });
    },
    newSlice() {
      if (used === slices) throw new Error('out of region slices');
      return SLICE_BYTES * used++;
    },
    word: (byteOffset) => new Int32Array(memory.buffer, byteOffset, 1),
    file(name, content) {
      const file = path.join(dir, name);
      fs.writeFileSync(file, content);
      return file;
    },
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

module.exports = { createContext };
