'use strict';
// The loader (lib/native.js), run on a copy of lib/ in a scratch package so that what it finds
// can be arranged: which attempts it makes, in which order, and what it tells the user.
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const native = require('../lib/native');

const root = path.join(__dirname, '..');
// The binary this test process itself loaded, to place where the loader should find it.
const binary = Object.keys(require.cache).find((file) => file.endsWith('parklock.node'));

const scratch = [];
after(() => {
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
});

function scratchPackage() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parklock loader '));
  scratch.push(dir);
  fs.cpSync(path.join(root, 'lib'), path.join(dir, 'lib'), { recursive: true });
  fs.copyFileSync(path.join(root, 'package.json'), path.join(dir, 'package.json'));
  return dir;
}

// Loads the scratch package in a child process; reports the binary it loaded or the error.
function load(dir, env = {}) {
  const script = `
    try {
      require(${JSON.stringify(path.join(dir, 'lib', 'native.js'))});
      console.log(JSON.stringify({ loaded: Object.keys(require.cache).find((f) => f.endsWith('.node')) }));
    } catch (error) {
      console.log(JSON.stringify({ code: error.code, message: error.message }));
    }`;
  const result = spawnSync(process.execPath, ['-e', script], {
    encoding: 'utf8',
    env: { ...process.env, PARKLOCK_NATIVE_PATH: '', ...env },
  });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout);
}

describe('native loader', () => {
  let dir;
  before(() => {
    dir = scratchPackage();
  });

  it('with nothing to load, lists every attempt and the command that builds from source', () => {
    const { code, message } = load(dir);
    assert.equal(code, 'ERR_PARKLOCK_NATIVE_MISSING');
    assert.match(message, /source build: .*build[/\\]addon[/\\]Release[/\\]parklock\.node: not found/);
    assert.match(message, /prebuilt [\w-]+: .*prebuilds.*: not found/);
    assert.match(message, /ships no prebuilt binary for [\w-]+ \(it has: none\)/);
    assert.match(message, /CMake >= 3\.20 and a C\+\+20 compiler/);
    assert.ok(message.includes(JSON.stringify(path.join(dir, 'scripts', 'build-from-source.js'))));
  });

  it('loads the prebuilt binary for this platform', () => {
    const { prebuildTag } = require('../lib/platform');
    const target = path.join(dir, 'prebuilds', prebuildTag(), 'parklock.node');
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(binary, target);
    assert.equal(load(dir).loaded, target);
  });

  it('prefers a source build to the prebuilt binary', () => {
    const target = path.join(dir, 'build', 'addon', 'Release', 'parklock.node');
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(binary, target);
    assert.equal(load(dir).loaded, target);
  });

  it('prefers PARKLOCK_NATIVE_PATH to both', () => {
    const { loaded } = load(dir, { PARKLOCK_NATIVE_PATH: binary });
    assert.equal(loaded, binary);
  });

  it('reports a binary that exists but does not load, and what to do instead', () => {
    const broken = scratchPackage();
    const { prebuildTag } = require('../lib/platform');
    const target = path.join(broken, 'prebuilds', prebuildTag(), 'parklock.node');
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, 'not a shared library');
    const { code, message } = load(broken);
    assert.equal(code, 'ERR_PARKLOCK_NATIVE_MISSING');
    assert.match(message, /failed to load: /);
    assert.match(message, /exists but did not load here/);
    assert.match(message, /build-from-source\.js/);
  });

  it('exports the addon', () => {
    assert.equal(typeof native.mutexLayout, 'object');
  });
});
