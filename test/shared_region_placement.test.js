'use strict';
// Placing primitives in sharedMemory(): every process runs the same memory.place() and none sees
// a primitive before its initial state is written, however the processes interleave with the one
// that created the file; the README's former pattern (X.init() in the creator, new X() in the
// others) is refused where it would have handed out zeroed words. Overlapping placements, and a
// different kind at the same bytes, are refused in the same process and from another; the same
// placement again finds the one already there, whatever initial value it is given.
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { fork } = require('node:child_process');
const { sharedMemory, Mutex, Semaphore, Latch, Barrier, RWLock, Once } = require('../lib');
const native = require('../lib/native');
const { fixture, withinLimit, exitIfKeptAlive, messageFrom, exited, removeTemporary } = require('./helpers');
const { LATCH, SEMAPHORE } = require('./fixtures/region_placer');

exitIfKeptAlive();
const PLACER = fixture('region_placer.js');
const OTHERS = 6;
let directory;
let serial = 0;

const freshPath = () => path.join(directory, `placement-${++serial}`);
const placer = (file, ...args) =>
  fork(PLACER, [file, ...args.map(String)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const reportOf = (child) => messageFrom(child, (message) => message !== 'created');

async function reportsOf(children) {
  const reports = await withinLimit(Promise.all(children.map(reportOf)), 'every placer to report', 60_000);
  await Promise.all(children.map(exited));
  return reports;
}

// The creator of a fresh file, stopped between creating it and placing anything, while OTHERS
// processes open it and place; then the creator goes on. Returns every report, the creator's last.
async function othersFirst(pattern) {
  const file = freshPath();
  const creator = placer(file, pattern);
  const creatorReport = reportOf(creator);
  await withinLimit(messageFrom(creator, (message) => message === 'created'), 'the creator to create');
  const others = Array.from({ length: OTHERS }, () => placer(file, pattern));
  const reports = await reportsOf(others);
  creator.send('go');
  reports.push(await withinLimit(creatorReport, 'the creator to report'));
  await exited(creator);
  return reports;
}

describe('placing primitives in sharedMemory()', { skip: !native.regionsSupported && 'no regions on this platform' }, () => {
  before(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'parklock-placement-'));
  });
  after(() => removeTemporary(directory));

  it('memory.place() in every process: none sees the Latch or the Semaphore before the creator would have written it', async () => {
    const reports = await othersFirst('place');
    assert.deepEqual(reports.map(({ created }) => created), [...Array(OTHERS).fill(false), true]);
    for (const report of reports) assert.deepEqual({ ...report, created: undefined }, { created: undefined, count: 2, available: 3 });
  });

  it('memory.place() in processes started at once on a fresh file: each sees the Latch(2) and the Semaphore(3)', async () => {
    const file = freshPath();
    const children = Array.from({ length: OTHERS + 2 }, () => placer(file, 'place'));
    // The creator, whichever it is, waits for 'go': send it once it has said so.
    for (const child of children) {
      messageFrom(child, (message) => message === 'created').then(() => child.send('go'));
    }
    const reports = await reportsOf(children);
    assert.equal(reports.filter(({ created }) => created).length, 1);
    for (const { count, available, refused } of reports) assert.deepEqual({ count, available, refused }, { count: 2, available: 3, refused: undefined });
  });

  it("the former pattern (X.init() when memory.created, else new X()) is refused before the creator's init, never handed zeroed words", async () => {
    const reports = await othersFirst('created-branch');
    const creator = reports.pop();
    assert.deepEqual({ count: creator.count, available: creator.available }, { count: 2, available: 3 });
    for (const report of reports) {
      assert.notEqual(report.count, 0, 'a Latch(2) seen open');
      assert.notEqual(report.available, 0, 'a Semaphore(3) seen without permits');
      assert.equal(report.refused, 'ERR_PARKLOCK_NOT_PLACED');
      assert.match(report.message, /memory\.place\(0, Latch, count\)/);
    }
  });

  it('refuses an overlapping placement, or another kind at the same bytes, naming both; the same placement again finds the first', () => {
    const memory = sharedMemory(freshPath(), { size: 256 });
    const semaphore = memory.place(64, Semaphore, 3);
    const overlap = { code: 'ERR_PARKLOCK_OVERLAP' };
    assert.throws(() => memory.place(64, Mutex), {
      ...overlap,
      message: /Mutex at bytes 64 to 67: it overlaps the Semaphore at bytes 64 to 67/,
      placed: { kind: 'Semaphore', byteOffset: 64, byteLength: 4 },
      placement: { kind: 'Mutex', byteOffset: 64, byteLength: 4 },
    });
    assert.throws(() => new Mutex(memory, 64), overlap);
    assert.throws(() => memory.place(60, Barrier, 2), { ...overlap, message: /Barrier at bytes 60 to 67/ });
    assert.throws(() => Latch.init(memory, 64, 1), overlap);
    assert.throws(() => memory.place(60, RWLock), { ...overlap, message: /RWLock at bytes 60 to 67: it overlaps the Semaphore/ });

    const again = memory.place(64, Semaphore, 3);
    again.acquire(2);
    assert.equal(semaphore.available, 1);
    assert.equal(Semaphore.init(memory, 64, 3).available, 1, 'init() of a placed semaphore writes nothing');
    assert.equal(memory.place(64, Semaphore, 4).available, 1, "the first placer's value stands");
    assert.equal(new Semaphore(memory, 64).available, 1);
    again.release(2);

    // Right beside it is no overlap; a zeroed-is-fresh kind placed by its constructor is recorded.
    const beside = new RWLock(memory, 68);
    assert.throws(() => memory.place(72, Mutex), overlap);
    assert.equal(memory.place(68, RWLock).isLocked, beside.isLocked);
  });

  it('refuses an overlapping placement made in another process, and accepts the same one there', async () => {
    const file = freshPath();
    const memory = sharedMemory(file, { size: 256 });
    memory.place(64, Semaphore, 3).acquire(1);
    memory.place(128, Barrier, 2);
    const [overMutex, overLatch, same] = await reportsOf([
      placer(file, 'place-over', 'Mutex', 64),
      placer(file, 'place-over', 'Latch', 132, 1),
      placer(file, 'place-over', 'Semaphore', 64, 3),
    ]);
    assert.equal(overMutex.refused, 'ERR_PARKLOCK_OVERLAP');
    assert.deepEqual(overMutex.placed, { kind: 'Semaphore', byteOffset: 64, byteLength: 4 });
    assert.equal(overLatch.refused, 'ERR_PARKLOCK_OVERLAP');
    assert.match(overLatch.message, /Latch at bytes 132 to 135: it overlaps the Barrier at bytes 128 to 135/);
    assert.deepEqual(same, { created: false, placed: true });
    // And the other way round: what another process placed is refused here.
    const child = await reportsOf([placer(file, 'place-over', 'Mutex', 192)]);
    assert.deepEqual(child, [{ created: false, placed: true }]);
    assert.throws(() => memory.place(192, Once), { code: 'ERR_PARKLOCK_OVERLAP', message: /overlaps the Mutex at bytes 192 to 195/ });
  });

  it('attaching to a Latch, a Semaphore or a Barrier nobody placed is refused, pointing to memory.place()', () => {
    const memory = sharedMemory(freshPath(), { size: 256 });
    assert.throws(() => new Latch(memory, 0), { code: 'ERR_PARKLOCK_NOT_PLACED', message: /memory\.place\(0, Latch, count\)/ });
    assert.throws(() => new Semaphore(memory, 8), { code: 'ERR_PARKLOCK_NOT_PLACED', message: /memory\.place\(8, Semaphore, permits\)/ });
    assert.throws(() => new Barrier(memory, 16), { code: 'ERR_PARKLOCK_NOT_PLACED', message: /memory\.place\(16, Barrier, parties\)/ });
    assert.equal(memory.place(8, Semaphore).available, 0, 'a Semaphore placed without permits has none');
    assert.throws(() => memory.place(0, Mutex, 1), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => memory.place(0, Map), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => memory.place(0, Latch, -1), { code: 'ERR_OUT_OF_RANGE' });
  });

  it('keeps every byte asked for, with the table past them, and places in the last of them', () => {
    const size = 4096;
    const memory = sharedMemory(freshPath(), { size });
    assert.equal(memory.byteLength, size);
    assert.equal(sharedMemory(memory.path, { create: false }).byteLength, size);
    assert.throws(() => memory.place(size, Mutex), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => memory.place(size - 4, Barrier, 2), { code: 'ERR_OUT_OF_RANGE' });
    for (let i = 0; i < size / 4; i++) memory.place(4 * i, Mutex);
    assert.equal(memory.place(size - 4, Mutex).isLocked, false, 'what is placed is still found');
    assert.throws(() => sharedMemory(freshPath(), { size: 2 ** 30 }), { code: 'ERR_OUT_OF_RANGE' });
  });
});
