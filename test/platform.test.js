'use strict';
// Which prebuilt binary the loader picks (lib/platform.js), for hosts other than this one: the
// platform, arch and libc are injected; the libc detection reads a stand-in for the node binary.
const { describe, it, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { prebuildTags, prebuildTag, linuxLibc } = require('../lib/platform');
const { targets } = require('../scripts/targets');

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'parklock-platform-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

// A file that starts like an ELF executable naming `interpreter` as its PT_INTERP.
function fakeNode(name, interpreter) {
  const file = path.join(scratch, name);
  fs.writeFileSync(file, Buffer.concat([Buffer.from('\x7fELF'), Buffer.alloc(60), Buffer.from(`${interpreter}\0`)]));
  return file;
}

describe('libc detection on Linux', () => {
  const noReport = () => assert.fail('the report is not needed when the interpreter tells');

  it('reads musl or glibc from the interpreter the node executable names', () => {
    assert.equal(linuxLibc(fakeNode('musl', '/lib/ld-musl-x86_64.so.1'), noReport), 'musl');
    assert.equal(linuxLibc(fakeNode('musl-arm', '/lib/ld-musl-aarch64.so.1'), noReport), 'musl');
    assert.equal(linuxLibc(fakeNode('glibc', '/lib64/ld-linux-x86-64.so.2'), noReport), 'glibc');
    assert.equal(linuxLibc(fakeNode('glibc-arm', '/lib/ld-linux-aarch64.so.1'), noReport), 'glibc');
  });

  it("falls back to Node's report for a static or unreadable executable, and to null without one", () => {
    const glibc = () => ({ header: { glibcVersionRuntime: '2.28' } });
    const musl = () => ({ header: {} });
    assert.equal(linuxLibc(fakeNode('static', ''), glibc), 'glibc');
    assert.equal(linuxLibc(path.join(scratch, 'missing'), musl), 'musl');
    assert.equal(linuxLibc(path.join(scratch, 'missing'), () => undefined), null);
  });

  it('this process: the libc Node itself reports', () => {
    if (process.platform !== 'linux') return;
    const header = process.report.getReport().header;
    assert.equal(linuxLibc(), header.glibcVersionRuntime ? 'glibc' : 'musl');
  });
});

describe('tags', () => {
  it('one tag per host, with the libc on Linux', () => {
    assert.deepEqual(prebuildTags({ platform: 'linux', arch: 'x64', libc: 'glibc' }), ['linux-x64-glibc']);
    assert.deepEqual(prebuildTags({ platform: 'linux', arch: 'arm64', libc: 'musl' }), ['linux-arm64-musl']);
    assert.deepEqual(prebuildTags({ platform: 'darwin', arch: 'arm64' }), ['darwin-arm64']);
    assert.deepEqual(prebuildTags({ platform: 'win32', arch: 'x64' }), ['win32-x64']);
    assert.deepEqual(prebuildTags({ platform: 'freebsd', arch: 'x64' }), ['freebsd-x64']);
  });

  it('an undetected libc tries glibc, then musl', () => {
    assert.deepEqual(prebuildTags({ platform: 'linux', arch: 'ppc64', libc: null }), ['linux-ppc64-glibc', 'linux-ppc64-musl']);
    assert.equal(prebuildTag({ platform: 'linux', arch: 'ppc64', libc: null }), 'linux-ppc64-(unknown libc)');
  });

  it('every target the prebuild script builds is the tag of some host', () => {
    for (const { tag } of targets) {
      const [platform, arch, libc] = tag.split('-');
      assert.deepEqual(prebuildTags({ platform, arch, libc }), [tag]);
    }
  });
});

describe('the loader, for a host it ships nothing for', () => {
  // lib/loader.js of a scratch package that ships every target, run in a child process.
  function loadAs(host) {
    const pkg = path.join(scratch, 'package');
    if (!fs.existsSync(pkg)) {
      fs.cpSync(path.join(__dirname, '..', 'lib'), path.join(pkg, 'lib'), { recursive: true });
      for (const { tag } of targets) {
        fs.mkdirSync(path.join(pkg, 'prebuilds', tag), { recursive: true });
        fs.writeFileSync(path.join(pkg, 'prebuilds', tag, 'parklock.node'), '');
      }
    }
    const script = `try { require(${JSON.stringify(path.join(pkg, 'lib', 'loader.js'))}).load(${JSON.stringify(host)}); }
      catch (error) { console.log(JSON.stringify({ code: error.code, message: error.message })); }`;
    const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, PARKLOCK_NATIVE_PATH: '' } });
    assert.equal(result.status, 0, result.stderr);
    return JSON.parse(result.stdout);
  }

  for (const host of [
    { platform: 'freebsd', arch: 'x64' },
    { platform: 'linux', arch: 'ppc64', libc: 'glibc' },
  ]) {
    const tag = prebuildTag(host);
    it(`${tag}: ERR_PARKLOCK_NATIVE_MISSING names the platform and what ships`, () => {
      const { code, message } = loadAs(host);
      assert.equal(code, 'ERR_PARKLOCK_NATIVE_MISSING');
      assert.match(message, new RegExp(`prebuilt ${tag}: .*prebuilds.${tag}.parklock\\.node: not found`));
      const shipped = targets.map((t) => t.tag).sort().join(', ');
      assert.ok(message.includes(`ships no prebuilt binary for ${tag} (it has: ${shipped})`), message);
    });
  }
});
