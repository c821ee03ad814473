'use strict';
// A region over its file's life and its process's (addon/across_processes/shared_region.h): creation that a
// SIGKILL at any moment cannot break, unfinished files repaired by the next opener, regions
// unmapped once nothing uses them (so that remove-and-re-create can go on for ever), and a file
// truncated under its users reported rather than taken for free locks.
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { fork } = require('node:child_process');
const { sharedMemory, Mutex } = require('../lib');
const native = require('../lib/native');
const { fixture, withinLimit, exitIfKeptAlive, messageFrom, exited, removeTemporary, UNDER_WINE } = require('./helpers');

exitIfKeptAlive();
const AGENT = fixture('region_lifetime_agent.js');
const supported = native.regionsSupported;
let directory;
let serial = 0;
const fresh = (name = 'region') => path.join(directory, `${name}-${++serial}`);

function agent(task, ...args) {
  const options = { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: ['--expose-gc'] };
  return fork(AGENT, [task, ...args.map(String)], options);
}

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The child's first message, or an error if it fails first (its message may come after its exit
// event, so a clean exit decides nothing).
function reportOf(child) {
  const failed = new Promise((resolve, reject) => {
    child.once('exit', (code, signal) => {
      if (code !== 0) reject(new Error(`the child failed (${code ?? signal}) before it reported`));
    });
  });
  failed.catch(() => {}); // a failure after the report is the case's own to judge
  return Promise.race([messageFrom(child), failed]);
}

// Four processes open `file` at once, each counting `times` under its Mutex; returns how many
// of them made the file a region.
async function fourOpenAndCount(file, times = 500) {
  const children = Array.from({ length: 4 }, () => agent('open-count', file, times));
  const opened = Promise.all(children.map((child) => messageFrom(child, (m) => m?.created !== undefined)));
  const counted = Promise.all(children.map((child) => messageFrom(child, (m) => m?.counted !== undefined)));
  const created = (await withinLimit(opened, 'four processes to open the file')).filter((m) => m.created).length;
  await withinLimit(counted, 'four processes to count', 60_000);
  await withinLimit(Promise.all(children.map(exited)), 'the four to exit');
  const memory = sharedMemory(file, { create: false });
  assert.equal(new Int32Array(memory.buffer, 8, 1)[0], 4 * times, 'no count lost: one region for all four');
  return created;
}

describe('sharedMemory() over a file\'s life', { skip: !supported && 'no regions on this platform' }, () => {
  before(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'parklock-lifetime-'));
  });
  after(() => removeTemporary(directory));

  it('repairs a file that a creator left empty or unfinished, once, for four processes opening it at once', async () => {
    const empty = fresh('empty');
    fs.writeFileSync(empty, '', { mode: 0o600 });
    // Opening it without leave to create does not repair it, and says how to.
    assert.throws(() => sharedMemory(empty, { create: false }), {
      code: 'ERR_PARKLOCK_REGION_INVALID',
      message: /died creating it.*repair/,
    });
    assert.equal(await fourOpenAndCount(empty), 1);

    // What a creator of the earlier layout left when killed between its header's fields and its
    // magic: the version and the size, nothing else.
    const unfinished = fresh('unfinished');
    const header = Buffer.alloc(native.regionHeaderBytes + 64);
    header.writeUInt32LE(1, 4);
    header.writeBigUInt64LE(64n, 8);
    fs.writeFileSync(unfinished, header, { mode: 0o600 });
    assert.equal(await fourOpenAndCount(unfinished), 1);

    // What a creator of this layout leaves there: the identity and the mechanism too.
    const unfinishedNow = fresh('unfinished-now');
    header.writeUInt32LE(native.regionVersion, 4);
    header.writeBigUInt64LE(0x1234n, 16);
    header.writeUInt32LE(native.crossProcessMechanism === 'doorbell' ? 1 : 0, 28);
    fs.writeFileSync(unfinishedNow, header, { mode: 0o600 });
    assert.equal(await fourOpenAndCount(unfinishedNow), 1);

    // In this process too, and at the size asked for.
    const here = fresh('here');
    fs.writeFileSync(here, '', { mode: 0o600 });
    const memory = sharedMemory(here, { size: 256 });
    assert.equal(memory.created, true);
    assert.equal(memory.byteLength, 256);
    assert.equal(sharedMemory(here).created, false);
  });

  it('creators SIGKILLed at random moments leave only finished regions, which four processes then open at once', async () => {
    const runs = Number(process.env.PARKLOCK_CREATION_KILLS) || 20;
    const left = [];
    const strays = [];
    for (let run = 0; run < runs; run++) {
      const where = fs.mkdtempSync(path.join(directory, 'kills-'));
      const creator = agent('create-forever', where);
      // Once it creates, a kill at a random moment of its loop.
      const started = Date.now();
      while (fs.readdirSync(where).length === 0 && Date.now() - started < 10_000) await delay(1);
      await delay(Math.random() * 20);
      creator.kill('SIGKILL');
      await withinLimit(exited(creator), 'the creator to die');
      for (const name of fs.readdirSync(where)) {
        // Nothing but regions at their final names, nothing half made. Where files cannot be made
        // unnamed (the doorbell mechanism's way: macOS), the creator's temporary file may be left,
        // named after it, until the next creation in the directory removes it.
        if (native.crossProcessMechanism === 'doorbell' && name === `.parklock-${creator.pid}-${name.split('-')[2]}`) {
          strays.push(path.join(where, name));
          continue;
        }
        assert.match(name, /^r-\d+$/);
        const file = path.join(where, name);
        const memory = sharedMemory(file, { create: false });
        assert.equal(memory.byteLength, 64, file);
        left.push(file);
      }
    }
    assert.ok(left.length > 0);
    // The last file of a run is the one most likely to have been cut short.
    for (const file of left.slice(-3)) assert.equal(await fourOpenAndCount(file, 200), 0);
    // A creation in a directory removes what dead creators left there.
    for (const stray of strays) {
      sharedMemory(path.join(path.dirname(stray), 'after'), { size: 64 });
      assert.equal(fs.existsSync(stray), false, `${stray} is still there after a creation beside it`);
    }
  });

  it('unmaps a region that nothing uses: 10,000 removals and re-creations in one process end with none mapped', async () => {
    // Windows keeps every file (a mapped one cannot be removed): 1,000 of them there.
    const rounds = process.platform === 'win32' ? 1_000 : 10_000;
    const child = agent('recreate', fresh(), rounds);
    const report = await withinLimit(reportOf(child), 'the re-creations', 120_000);
    await exited(child);
    assert.equal(report.after, 0, `${report.after} regions still mapped after the collections`);
    assert.ok(report.most < rounds, `all ${report.most} were mapped at once`);
  });

  it(`maps at most ${native.regionMostMapped} regions at once, refusing the next with ERR_PARKLOCK_REGION_LIMIT until some are let go`, {
    skip: UNDER_WINE && "Wine's server runs out of descriptors (EMFILE) before that many files are open",
  }, async () => {
    const where = fs.mkdtempSync(path.join(directory, 'fill-'));
    const child = agent('fill', where);
    const report = await withinLimit(reportOf(child), 'the regions to be filled', 120_000);
    await exited(child);
    assert.deepEqual(report, { opened: native.regionMostMapped, code: 'ERR_PARKLOCK_REGION_LIMIT', after: 0, again: true });
    removeTemporary(where);
  });

  it('a process that lets go of a region holding a lock ends its identities there: the next acquirer is told', async () => {
    const file = fresh();
    const memory = sharedMemory(file, { size: 64 });
    const mutex = new Mutex(memory, 0);
    const forgetter = agent('lock-and-forget', file);
    const { mapped } = await withinLimit(reportOf(forgetter), 'the other process to lock and let go');
    assert.equal(mapped, 0);
    const error = await withinLimit(mutex.lockAsync().then(() => null, (failure) => failure), 'the lock');
    assert.equal(error?.code, 'ERR_PARKLOCK_OWNER_DIED');
    mutex.unlock();
    forgetter.kill('SIGKILL');
    await exited(forgetter);
  });

  it('a file truncated and regrown under a holder and its waiters is reported to each of them, never taken for a free lock', async () => {
    const file = fresh();
    sharedMemory(file, { size: 64 });
    const holder = agent('hold', file);
    await withinLimit(messageFrom(holder, (m) => m === 'locked'), 'the holder to lock');
    const waiters = [agent('wait', file, 0, 'sync'), agent('wait', file, 0, 'async')];
    const outcomes = waiters.map((waiter) => messageFrom(waiter, (m) => m?.outcome !== undefined));
    await withinLimit(Promise.all(waiters.map((w) => messageFrom(w, (m) => m === 'waiting'))), 'the waiters to queue');
    if (process.platform === 'win32') {
      // Windows refuses to shorten a file that a process maps: the case cannot arise there.
      assert.throws(() => fs.truncateSync(file, 0));
      for (const child of [holder, ...waiters]) child.kill('SIGKILL');
      await Promise.all([holder, ...waiters].map(exited));
      return;
    }
    fs.truncateSync(file, 0);
    fs.truncateSync(file, native.regionHeaderBytes + 64);
    for (const { outcome } of await withinLimit(Promise.all(outcomes), 'the waiters to hear of it')) {
      assert.equal(outcome, 'ERR_PARKLOCK_REGION_LOST');
    }
    const unlocked = messageFrom(holder, (m) => m?.outcome !== undefined);
    holder.send('unlock');
    assert.equal((await withinLimit(unlocked, 'the holder to unlock')).outcome, 'ERR_PARKLOCK_REGION_LOST');
    holder.kill('SIGKILL');
    await Promise.all([holder, ...waiters].map(exited));
    // The waiter that took the zeroed word wrote its identity into the file: to the next opener
    // it is somebody's data, not an unfinished region's zeros, and it is left alone.
    assert.throws(() => sharedMemory(file), { code: 'ERR_PARKLOCK_REGION_INVALID' });
  });
});
