'use strict';
// The documentation's code runs: every ```js block of README.md and docs/*.md is a complete
// CommonJS program, run here as a user would run it (it requires 'parklock' by name), and must
// exit cleanly and print something. Blocks that are not programs say so with ```js fragment; shell
// commands are ```sh. Any other fence fails, so a new block cannot slip past unmarked. The README's
// example of each section named in PROGRAM_SECTIONS must be such a program; one that opens a
// sharedMemory() region or a LockManager lock file is skipped where regions are not built. Relative links between these
// files must reach a file and, where they name one, a heading.
const { describe, it, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const native = require('../lib/native');

const root = path.join(__dirname, '..');
// README sections whose first code block users copy as a whole program.
const PROGRAM_SECTIONS = ['Across processes'];
// Inside the package, so that require('parklock') finds this checkout through "exports".
const scratch = path.join(root, 'build', 'doctest');
// The programs' os.tmpdir(), fresh for each run: the examples name fixed files there
// (myapp.locks), which a run with another build or PARKLOCK_CROSS_PROCESS would find made.
const temporary = fs.mkdtempSync(path.join(os.tmpdir(), 'parklock-docs-'));
after(() => fs.rmSync(temporary, { recursive: true, force: true }));

const files = [
  'README.md',
  ...fs
    .readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

function codeBlocks(file, markdown) {
  const blocks = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i]);
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    assert.notEqual(end, -1, `${file}:${i + 1}: unclosed code block`);
    blocks.push({ line: i + 1, info: open[1].trim(), code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

// The text outside code blocks, where links are.
function prose(markdown) {
  return markdown.replace(/^```.*\n[\s\S]*?^```$/gm, '');
}

// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens.
function anchors(markdown) {
  return new Set(
    [...prose(markdown).matchAll(/^#{1,6} (.+)$/gm)].map(([, heading]) =>
      heading
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

for (const file of files) {
  const markdown = fs.readFileSync(path.join(root, file), 'utf8');
  const blocks = codeBlocks(file, markdown);

  describe(file, () => {
    it('marks every code block as a program (js), a fragment (js fragment) or shell (sh)', () => {
      const unmarked = blocks.filter((b) => !['js', 'js fragment', 'sh'].includes(b.info));
      assert.deepEqual(
        unmarked.map((b) => `${file}:${b.line}: \`\`\`${b.info}`),
        [],
        'fence each block as js, js fragment or sh',
      );
    });

    if (file === 'README.md') {
      it('has runnable examples', () => {
        assert.ok(blocks.filter((b) => b.info === 'js').length >= 5);
      });

      for (const section of PROGRAM_SECTIONS) {
        it(`runs the example of "${section}" as a program, not a fragment`, () => {
          const heading = markdown.split('\n').indexOf(`## ${section}`) + 1;
          assert.notEqual(heading, 0, `no section ${section}`);
          const first = blocks.find((b) => b.line > heading);
          assert.equal(first?.info, 'js', `README.md:${first?.line}`);
        });
      }
    }

    // The registry shows the README without the repository's files: images need absolute URLs.
    it('links images by absolute URL', () => {
      for (const [, url] of markdown.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)) {
        assert.match(url, /^https:\/\//, `${file}: image ${url}`);
      }
    });

    it('links to files and headings that exist', () => {
      const broken = [];
      for (const [, target] of prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [linked, anchor] = target.split('#');
        const resolved = linked ? path.join(path.dirname(path.join(root, file)), linked) : path.join(root, file);
        if (!fs.existsSync(resolved)) {
          broken.push(`${target}: no such file`);
        } else if (anchor !== undefined && !anchors(fs.readFileSync(resolved, 'utf8')).has(anchor)) {
          broken.push(`${target}: no such heading`);
        }
      }
      assert.deepEqual(broken, [], `${file}: broken links`);
    });

    for (const block of blocks.filter((b) => b.info === 'js')) {
      const acrossProcesses = block.code.includes('sharedMemory(') || block.code.includes('new LockManager(');
      const skip = !native.regionsSupported && acrossProcesses && 'no regions on this platform';
      it(`runs the program at ${file}:${block.line}`, { skip }, () => {
        fs.mkdirSync(scratch, { recursive: true });
        const name = `${file.replace(/\.md$/, '').replace(/\//g, '-')}-${block.line}.js`;
        const program = path.join(scratch, name);
        fs.writeFileSync(program, `${block.code}\n`);
        const result = spawnSync(process.execPath, [program], {
          cwd: scratch,
          env: { ...process.env, TMPDIR: temporary, TMP: temporary, TEMP: temporary },
          encoding: 'utf8',
          timeout: 30_000,
        });
        assert.equal(result.status, 0, `exit ${result.status} ${result.signal ?? ''}\n${result.stderr}`);
        assert.notEqual(result.stdout.trim(), '', 'prints nothing');
      });
    }
  });
}
