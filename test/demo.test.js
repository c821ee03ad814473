'use strict';
// `npm run demo` has to make its point every time: the unlocked run corrupts the shared data,
// the locked run keeps it consistent.
const { it } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const demo = path.join(__dirname, '..', 'examples', 'demo.js');

it('the demo shows corruption without a lock and consistency with one, run after run', () => {
  for (let run = 0; run < 3; run++) {
    const result = spawnSync(process.execPath, [demo], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^without a lock .*: CORRUPTED$/m);
    assert.match(result.stdout, /^with a Mutex .*: consistent$/m);
  }
});
