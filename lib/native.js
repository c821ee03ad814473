'use strict';
// Finds and loads the compiled addon. Tries, in order: the path in PARKLOCK_NATIVE_PATH, the
// cmake-js build of this package, and the node-gyp style location; on failure one error lists
// every attempt and why it failed.
const path = require('node:path');

const root = path.join(__dirname, '..');
const candidates = [
  process.env.PARKLOCK_NATIVE_PATH,
  path.join(root, 'build', 'addon', 'Release', 'parklock.node'),
  path.join(root, 'build', 'Release', 'parklock.node'),
].filter(Boolean);

function load() {
  const failures = [];
  for (const candidate of candidates) {
    try {
      return require(candidate);
    } catch (error) {
      // Another copy is not a missing addon: trying the next candidate would hide it.
      if (error.code === 'ERR_PARKLOCK_DUPLICATE_ADDON') throw error;
      failures.push(`  ${candidate}: ${error.code === 'MODULE_NOT_FOUND' ? 'not found' : error.message}`);
    }
  }
  const error = new Error(
    'parklock: could not load its native addon; run `npm install` (or `npm run build`) in the ' +
      `parklock package to build it. Tried:\n${failures.join('\n')}`,
  );
  error.code = 'ERR_PARKLOCK_NATIVE_MISSING';
  throw error;
}

module.exports = load();
