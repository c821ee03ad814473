'use strict';
// Finds and loads the native addon; lib/native.js loads it for this process. Tries, in order: the
// file named by PARKLOCK_NATIVE_PATH, a source build of this package (build/addon, from
// `npm run build:source`), and the prebuilt binary for this platform shipped under prebuilds/. A source build comes before the prebuilt
// binary so that a checkout under development, or a package rebuilt from source, runs its own
// code. On failure one error lists every attempt and says what to do about it.
const fs = require('node:fs');
const path = require('node:path');
const { prebuildTags, prebuildTag } = require('./platform');

const root = path.join(__dirname, '..');
const BINARY = 'parklock.node';

// `host` ({ platform, arch, libc }, each defaulting to this process's) picks the prebuilt binaries.
function attempts(host) {
  const list = [];
  const fromEnv = process.env.PARKLOCK_NATIVE_PATH;
  if (fromEnv) list.push({ what: 'PARKLOCK_NATIVE_PATH', file: path.resolve(fromEnv) });
  list.push({ what: 'source build', file: path.join(root, 'build', 'addon', 'Release', BINARY) });
  for (const tag of prebuildTags(host)) {
    list.push({ what: `prebuilt ${tag}`, file: path.join(root, 'prebuilds', tag, BINARY) });
  }
  return list;
}

function shippedTags() {
  try {
    const dir = path.join(root, 'prebuilds');
    return fs
      .readdirSync(dir)
      .filter((tag) => fs.existsSync(path.join(dir, tag, BINARY)))
      .sort();
  } catch {
    return [];
  }
}

// What the user can do, given what was found: the advice differs between "nothing was built for
// this platform" and "a binary exists but does not load here".
function advice(tried, host) {
  const lines = [];
  if (process.env.PARKLOCK_NATIVE_PATH && !tried[0].loadError) {
    lines.push('PARKLOCK_NATIVE_PATH names a file that does not exist; fix or unset it.');
  }
  const tag = prebuildTag(host);
  const shipped = shippedTags();
  const broken = tried.filter((t) => t.what.startsWith('prebuilt') && t.loadError);
  if (broken.length > 0) {
    lines.push(
      `The prebuilt binary for ${tag} exists but did not load here (an older C library or a ` +
        'damaged install?). Build from source instead (below), or reinstall parklock.',
    );
  } else {
    lines.push(
      `parklock ships no prebuilt binary for ${tag} (it has: ${shipped.join(', ') || 'none'}).`,
    );
  }
  lines.push(
    'To build from source you need CMake >= 3.20 and a C++20 compiler (g++ >= 10 or clang >= 14,',
    'or Visual Studio 2022 on Windows), and network access to the npm registry for the build tools:',
    `  node ${JSON.stringify(path.join(root, 'scripts', 'build-from-source.js'))}`,
    'This builds into the parklock package directory; nothing else is changed.',
  );
  return lines.join('\n');
}

function load(host = {}) {
  const tried = attempts(host);
  for (const attempt of tried) {
    if (!fs.existsSync(attempt.file)) continue;
    try {
      return require(attempt.file);
    } catch (error) {
      // Another copy is not a missing addon: trying the next candidate would hide it.
      if (error.code === 'ERR_PARKLOCK_DUPLICATE_ADDON') throw error;
      attempt.loadError = error.message.split('\n')[0];
    }
  }
  const report = tried.map(
    (t) => `  ${t.what}: ${t.file}: ${t.loadError ? `failed to load: ${t.loadError}` : 'not found'}`,
  );
  const error = new Error(
    `parklock: could not load its native addon. Tried:\n${report.join('\n')}\n${advice(tried, host)}`,
  );
  error.code = 'ERR_PARKLOCK_NATIVE_MISSING';
  throw error;
}

module.exports = { load };
