#!/usr/bin/env node
'use strict';
// A hash of everything the addon is compiled from. scripts/prebuild.js stores it next to each
// prebuilt binary, and the package check compares it with the sources, so that a change to the
// C++ code cannot ship with a binary built from the code before it.
//   node scripts/source-hash.js            prints the hash
//   node scripts/source-hash.js --check    exits 1 if a prebuilt binary was built from other sources
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { filesUnder } = require('./source-files');

const root = path.join(__dirname, '..');

function sourceFiles() {
  return ['CMakeLists.txt', ...filesUnder('addon'), ...filesUnder('binding')].sort();
}

function sourceHash() {
  const hash = crypto.createHash('sha256');
  for (const file of sourceFiles()) {
    // Line endings normalized, so that a Windows checkout hashes the same as a Unix one.
    const text = fs.readFileSync(path.join(root, file), 'utf8').replace(/\r\n/g, '\n');
    hash.update(`${file}\0${text}\0`);
  }
  return hash.digest('hex');
}

function check() {
  const expected = sourceHash();
  const dir = path.join(root, 'prebuilds');
  let stale = 0;
  for (const tag of fs.readdirSync(dir)) {
    const file = path.join(dir, tag, 'sources.sha256');
    const stored = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : '(none)';
    const fresh = stored === expected;
    if (!fresh) stale++;
    console.log(`prebuilds/${tag}: ${fresh ? 'built from these sources' : 'STALE, run npm run prebuild'}`);
  }
  return stale === 0;
}

module.exports = { sourceFiles, sourceHash };

if (require.main === module) {
  if (process.argv.includes('--check')) process.exitCode = check() ? 0 : 1;
  else console.log(sourceHash());
}
