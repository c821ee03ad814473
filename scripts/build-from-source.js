#!/usr/bin/env node
'use strict';
// Builds the addon from source into build/addon of this package, where lib/native.js looks for it
// before the prebuilt binaries. For platforms parklock ships no binary for, and for development.
//
// The build tools (cmake-js and the Node-API headers) are devDependencies, so an installed copy
// of parklock does not have them: they are then installed into this package's own node_modules
// first (npm registry access needed; --ignore-scripts so no other package's script runs).
// Needs CMake >= 3.20 and a C++20 compiler on PATH.
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..');
const tools = ['cmake-js', 'node-addon-api', 'node-api-headers'];

function resolvable(name) {
  try {
    require.resolve(`${name}/package.json`, { paths: [root] });
    return true;
  } catch {
    return false;
  }
}

function run(command, args) {
  console.log(`> ${command} ${args.join(' ')}`);
  // npm and npx are .cmd scripts on Windows, which only a shell runs.
  const result = spawnSync(command, args, {
    cwd: root,
    stdio: 'inherit',
    shell: process.platform === 'win32',
  });
  if (result.status !== 0) {
    console.error(`parklock: \`${command} ${args.join(' ')}\` failed`);
    process.exit(result.status ?? 1);
  }
}

const missing = tools.filter((name) => !resolvable(name));
if (missing.length > 0) {
  const pkg = require(path.join(root, 'package.json'));
  const specs = missing.map((name) => `${name}@${pkg.devDependencies[name]}`);
  run('npm', ['install', '--no-save', '--no-package-lock', '--ignore-scripts', ...specs]);
}
const cmakeJs = require.resolve('cmake-js/bin/cmake-js', { paths: [root] });
run(process.execPath, [cmakeJs, 'compile', '--out', path.join('build', 'addon')]);
console.log('parklock: built build/addon/Release/parklock.node');
