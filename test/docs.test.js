'use strict';
// The README's code runs: every ```js block is a complete CommonJS program, run here as a user
// would run it (it requires 'parklock' by name), and must exit cleanly and print something.
// Blocks that are not programs say so with ```js fragment; shell commands are ```sh. Any other
// fence fails, so a new block cannot slip past unmarked.
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
// Inside the package, so that require('parklock') finds this checkout through "exports".
const scratch = path.join(root, 'build', 'doctest');

function codeBlocks(markdown) {
  const blocks = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i]);
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    assert.notEqual(end, -1, `README.md:${i + 1}: unclosed code block`);
    blocks.push({ line: i + 1, info: open[1].trim(), code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

const blocks = codeBlocks(readme);

describe('README.md', () => {
  it('marks every code block as a program (js), a fragment (js fragment) or shell (sh)', () => {
    const unmarked = blocks.filter((b) => !['js', 'js fragment', 'sh'].includes(b.info));
    assert.deepEqual(
      unmarked.map((b) => `line ${b.line}: \`\`\`${b.info}`),
      [],
      'fence each block as js, js fragment or sh',
    );
  });

  it('has runnable examples', () => {
    assert.ok(blocks.filter((b) => b.info === 'js').length >= 5);
  });

  // The registry shows the README without the repository's files: images need absolute URLs.
  it('links images by absolute URL', () => {
    for (const [, url] of readme.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)) {
      assert.match(url, /^https:\/\//, `image ${url}`);
    }
  });

  for (const block of blocks.filter((b) => b.info === 'js')) {
    it(`runs the program at line ${block.line}`, () => {
      fs.mkdirSync(scratch, { recursive: true });
      const file = path.join(scratch, `readme-${block.line}.js`);
      fs.writeFileSync(file, `${block.code}\n`);
      const result = spawnSync(process.execPath, [file], {
        cwd: scratch,
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(result.status, 0, `exit ${result.status} ${result.signal ?? ''}\n${result.stderr}`);
      assert.notEqual(result.stdout.trim(), '', 'prints nothing');
    });
  }
});
