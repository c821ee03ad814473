'use strict';
// The code the baselines run: proper-lockfile, and for flock(2) fs-ext's flockSync() or, where
// fs-ext cannot be built, the C helper (flock_helper.c) compiled at run time. The npm packages
// are used where they resolve already, else installed into temporary folders outside the
// repository: neither becomes a dependency of parklock.
//
// Every finder returns what the cases need to run it, or { reason } it cannot be had; a reason
// turns the baseline's rows into "skipped" rather than failing the run.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const DEPS_DIR = path.join(os.tmpdir(), 'parklock-bench-deps');
// A folder of its own: a failed native build there must not disturb proper-lockfile's install.
const FS_EXT_DIR = path.join(os.tmpdir(), 'parklock-bench-deps-fs-ext');
const HELPER_SOURCE = path.join(__dirname, 'flock_helper.c');

function resolveIn(prefix, name) {
  try {
    return require.resolve(name, { paths: [__dirname, prefix] });
  } catch {
    return undefined;
  }
}

function packageVersion(file, name) {
  const marker = path.join('node_modules', name);
  const root = file.slice(0, file.lastIndexOf(marker) + marker.length);
  try {
    return JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version;
  } catch {
    return '?';
  }
}

function lastLines(text, count = 3) {
  return String(text || '').trim().split('\n').slice(-count).join(' | ');
}

// { file, version, where } or { reason }.
function findOrInstall(name, range, prefix) {
  let file = resolveIn(prefix, name);
  if (file === undefined) {
    process.stderr.write(`installing ${name}@${range} into ${prefix} ...\n`);
    fs.mkdirSync(prefix, { recursive: true });
    const npm = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix, `${name}@${range}`], {
      encoding: 'utf8',
      timeout: 300_000,
    });
    file = resolveIn(prefix, name);
    if (file === undefined) {
      const why = npm.error ? npm.error.message : lastLines(npm.stderr) || `npm exited with ${npm.status}`;
      return { reason: `npm install ${name}@${range} failed: ${why}` };
    }
  }
  return { file, version: packageVersion(file, name), where: path.dirname(file) };
}

function findProperLockfile() {
  const found = findOrInstall('proper-lockfile', '4', DEPS_DIR);
  if (found.reason) return found;
  return { ...found, label: `proper-lockfile ${found.version}` };
}

// fs-ext is a native addon: it resolves even where its build failed, so it counts only once it
// loads and has flockSync().
function findFsExt() {
  const found = findOrInstall('fs-ext', '2', FS_EXT_DIR);
  if (found.reason) return found;
  try {
    if (typeof require(found.file).flockSync !== 'function') return { reason: 'fs-ext has no flockSync()' };
  } catch (error) {
    return { reason: `fs-ext does not load: ${error.message}` };
  }
  return {
    kind: 'fs-ext',
    file: found.file,
    label: 'flock(2), fs-ext',
    description: `fs-ext ${found.version} flockSync() from ${found.where} (flock(2) called from Node, like the parklock row)`,
  };
}

// Compiled into `dir`, the run's temporary folder, which the run removes at its end.
function buildFlockHelper(dir) {
  const binary = path.join(dir, 'flock_helper');
  const cc = spawnSync('cc', ['-O2', '-o', binary, HELPER_SOURCE], { encoding: 'utf8', timeout: 120_000 });
  if (cc.error) return { reason: `cc: ${cc.error.message}` };
  if (cc.status !== 0) return { reason: `cc failed: ${lastLines(cc.stderr)}` };
  return {
    kind: 'c',
    binary,
    label: 'flock(2), C helper',
    description: 'a C helper compiled at run time with cc -O2 (flock(2) with no Node in the loop: a floor, not like-for-like)',
  };
}

// choice: 'auto' (fs-ext, else the C helper), 'fs-ext' or 'c'.
function findFlock(choice, dir) {
  const reasons = [];
  if (choice !== 'c') {
    const fsExt = findFsExt();
    if (!fsExt.reason) return fsExt;
    reasons.push(fsExt.reason);
  }
  if (choice !== 'fs-ext') {
    const helper = buildFlockHelper(dir);
    if (!helper.reason) {
      const why = reasons.length ? `; fs-ext unavailable: ${reasons[0]}` : '';
      return { ...helper, description: `${helper.description}${why}` };
    }
    reasons.push(helper.reason);
  }
  return { reason: reasons.join('; ') };
}

module.exports = { findFlock, findProperLockfile };
