#!/usr/bin/env node
'use strict';
// Builds the prebuilt binaries that ship under prebuilds/<tag>/ (see lib/platform.js for tags).
// One binary per platform serves every Node version, because the addon uses only Node-API (8).
//
//   npm run prebuild -- --all          every target of scripts/targets.js, cross-compiled with the
//                                      pinned zig (Linux x64 only; fetched from the npm registry)
//   npm run prebuild -- --target TAG   one of those targets, the same way
//   npm run prebuild                   this machine's platform: on Linux x64 as --target does, so
//                                      that it matches --all; elsewhere with the machine's own
//                                      compiler (CMake), as the CI workflow of macOS and Windows does
//
// Each zig-built binary is checked (scripts/check-binaries.js); one this machine can load is
// loaded once before it is kept. Its sources.sha256 records the sources it was built from.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { prebuildTag } = require('../lib/platform');
const { sourceHash } = require('./source-hash');
const { targets } = require('./targets');
const { crossBuild } = require('./cross-build');
const { checkBinary } = require('./check-binaries');

const root = path.join(__dirname, '..');

function run(command, args) {
  console.log(`> ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

// The host build through CMake: libstdc++ linked in on Linux (PARKLOCK_PREBUILD), then stripped.
function hostBuild() {
  const buildDir = path.join('build', 'prebuild');
  const cmakeJs = require.resolve('cmake-js/bin/cmake-js', { paths: [root] });
  // A fresh configure each time: a cache left from a different compiler or options would be reused.
  fs.rmSync(path.join(root, buildDir), { recursive: true, force: true });
  run(process.execPath, [cmakeJs, 'compile', '--out', buildDir, '--CDPARKLOCK_PREBUILD=ON']);
  // Debug symbols are most of the file; they stay in build/prebuild/Release for anyone who needs them.
  const stripped = path.join(root, buildDir, 'parklock.node');
  fs.copyFileSync(path.join(root, buildDir, 'Release', 'parklock.node'), stripped);
  if (process.platform === 'linux') run('strip', ['--strip-unneeded', stripped]);
  if (process.platform === 'darwin') run('strip', ['-x', stripped]);
  return stripped;
}

function keep(tag, built, check) {
  const target = path.join(root, 'prebuilds', tag, 'parklock.node');
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.copyFileSync(built, target);
  const { problems, loadable } = check ? checkBinary(tag, target) : { problems: [], loadable: true };
  if (problems.length > 0) {
    console.error(`${tag}:\n  ${problems.join('\n  ')}`);
    process.exit(1);
  }
  // Load it in a fresh process, bypassing any source build, before calling it done.
  if (loadable) {
    run(process.execPath, [
      '-e',
      `const n = require(${JSON.stringify(target)}); if (!n.mutexLayout) process.exit(1);`,
    ]);
  }
  fs.writeFileSync(path.join(path.dirname(target), 'sources.sha256'), `${sourceHash()}\n`);
  console.log(`${path.relative(root, target)}: ${fs.statSync(target).size} bytes`);
}

function main(argv) {
  const all = argv.includes('--all');
  const at = argv.indexOf('--target');
  const host = process.env.PARKLOCK_PREBUILD_TAG || prebuildTag();
  const crossHost = process.platform === 'linux' && process.arch === 'x64';
  if (!all && at < 0 && !crossHost) {
    keep(host, hostBuild(), false);
    return;
  }
  const wanted = at >= 0 ? argv[at + 1] : host;
  const chosen = all ? targets : targets.filter((t) => t.tag === wanted);
  if (chosen.length === 0) {
    console.error(`unknown target ${wanted}; one of: ${targets.map((t) => t.tag).join(', ')}`);
    process.exit(2);
  }
  for (const target of chosen) {
    const started = Date.now();
    keep(target.tag, crossBuild(target), true);
    console.log(`${target.tag}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
}

main(process.argv.slice(2));
