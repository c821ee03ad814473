#!/usr/bin/env node
'use strict';
// Builds the binary that ships for this platform: prebuilds/<tag>/parklock.node (see
// lib/platform.js for the tag). One binary serves every Node version, because the addon uses only
// Node-API (version 8). It is linked for redistribution (PARKLOCK_PREBUILD: libstdc++ and libgcc
// linked in on Linux), stripped, and loaded once before it is kept.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { prebuildTag } = require('../lib/platform');
const { sourceHash } = require('./source-hash');

const root = path.join(__dirname, '..');
const tag = process.env.PARKLOCK_PREBUILD_TAG || prebuildTag();
const buildDir = path.join('build', 'prebuild');

function run(command, args) {
  console.log(`> ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const cmakeJs = require.resolve('cmake-js/bin/cmake-js', { paths: [root] });
// A fresh configure each time: a cache left from a different compiler or options would be reused.
fs.rmSync(path.join(root, buildDir), { recursive: true, force: true });
run(process.execPath, [cmakeJs, 'compile', '--out', buildDir, '--CDPARKLOCK_PREBUILD=ON']);

const built = path.join(root, buildDir, 'Release', 'parklock.node');
const target = path.join(root, 'prebuilds', tag, 'parklock.node');
fs.mkdirSync(path.dirname(target), { recursive: true });
fs.copyFileSync(built, target);
// Debug symbols are most of the file; they stay in build/prebuild for anyone who needs them.
if (process.platform === 'linux') run('strip', ['--strip-unneeded', target]);
if (process.platform === 'darwin') run('strip', ['-x', target]);

// Load it in a fresh process, bypassing any source build, before calling it done.
run(process.execPath, [
  '-e',
  `const n = require(${JSON.stringify(target)}); if (!n.mutexLayout) process.exit(1);`,
]);
fs.writeFileSync(path.join(path.dirname(target), 'sources.sha256'), `${sourceHash()}\n`);
console.log(`${path.relative(root, target)}: ${fs.statSync(target).size} bytes`);
