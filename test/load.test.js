'use strict';
// Loading the package: terminating a worker while it loads the addon must never take the process
// down (a C++ exception escaping into Node-API aborts it).
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const { describe, it } = require('node:test');
const { fixture } = require('./helpers');

function runNode(args) {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { timeout: 50_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (error.signal ?? error.code) : 0, stdout, stderr });
    });
  });
}

describe('terminating a worker while it loads parklock', () => {
  it('300 load-and-terminate cycles: the process survives', { timeout: 60_000 }, async () => {
    const { code, stdout, stderr } = await runNode([fixture('load_terminate.js'), '300', '10']);
    assert.equal(code, 0, `the process died (${code}); stderr: ${stderr}`);
    assert.match(stdout, /PARKLOCK_SURVIVED/);
  });

  // Node unloads an addon once no environment uses it; parklock must stay loaded, or a later load
  // starts a new parking lot and thread-id counter (ids repeat), or is refused as another copy.
  it('with the main thread never loading it, the addon stays loaded: a later worker gets a new thread id', { timeout: 60_000 }, async () => {
    const { code, stdout, stderr } = await runNode([fixture('load_pinned.js'), '150', '10']);
    assert.equal(code, 0, `the process died (${code}); stderr: ${stderr}`);
    const result = JSON.parse(stdout.trim().split('\n').pop());
    assert.equal(result.error, null);
    assert.ok(result.last > result.first, `thread id ${result.last} after ${result.first}: the addon was loaded again`);
    if (process.platform === 'linux') assert.equal(result.mapped, true);
  });
});
