'use strict';
// A different copy of the addon file (a second version of the package) would have its own parking
// lot and thread ids; loading it must fail with a clear error instead of misbehaving later.
const { it } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { fixture } = require('./helpers');

it('loading a second, different copy of the addon throws ERR_PARKLOCK_DUPLICATE_ADDON', { timeout: 60_000 }, async (t) => {
  // The binary this process loaded (a source build or the prebuilt one), copied elsewhere.
  require('../lib');
  const native = Object.keys(require.cache).find((file) => file.endsWith('parklock.node'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parklock-copy-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const copy = path.join(dir, 'parklock.node');
  fs.copyFileSync(native, copy);
  const { error, stdout, stderr } = await new Promise((resolve) => {
    execFile(process.execPath, [fixture('duplicate_addon.js'), copy], { timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ error, stdout, stderr }),
    );
  });
  assert.equal(error, null, stderr);
  assert.match(stdout, /^main ERR_PARKLOCK_DUPLICATE_ADDON$/m);
  assert.match(stdout, /^worker ERR_PARKLOCK_DUPLICATE_ADDON$/m);
});

it('the mark of the process copy is not in the environment, so children do not inherit it', () => {
  const before = { ...process.env };
  require('../lib');
  assert.deepEqual({ ...process.env }, before);
  assert.equal(Object.keys(process.env).some((name) => name.startsWith('PARKLOCK_ADDON')), false);
});
