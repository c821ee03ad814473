'use strict';
// The files of the addon's source folders, for the scripts that hash them (source-hash.js) and
// compile them (cross-build.js): every file below `dir`, its layer folders included, as a path
// relative to the repository with forward slashes, sorted, so that every machine lists the same
// files in the same order.
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');

function filesUnder(dir) {
  const files = [];
  for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const name = `${dir}/${entry.name}`;
    if (entry.isDirectory()) files.push(...filesUnder(name));
    else files.push(name);
  }
  return files.sort();
}

module.exports = { filesUnder };
