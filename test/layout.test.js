'use strict';
// The shared-memory layout constants the addon exports (addon/primitives/*.h) against what the JavaScript
// side assumes, and against what actually appears in the word.
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { Mutex, layouts } = require('../lib');
const native = require('../lib/native');
const { threadId } = require('../lib/async_waits');
const { loadWord, queued, assertClean, testSignal, abortTestWaits, exitIfKeptAlive, withinLimit } = require('./helpers');

exitIfKeptAlive();

describe('mutex layout', () => {
  const layout = layouts.mutex;

  it('is exported, frozen, and equal to the addon\'s constants', () => {
    assert.ok(Object.isFrozen(layouts));
    assert.ok(Object.isFrozen(layout));
    assert.deepEqual({ ...layout }, { ...native.mutexLayout });
    for (const key of ['WORDS', 'BYTES', 'ALIGN', 'UNLOCKED', 'LOCKED', 'LOCKED_PARKED', 'STATE_MASK', 'OWNER_SHIFT']) {
      assert.equal(typeof layout[key], 'number', key);
      assert.ok(Number.isInteger(layout[key]), key);
    }
  });

  it('matches addon/primitives/mutex.h: one int32 word, state in the low 2 bits, owner above', () => {
    assert.equal(layout.WORDS, 1);
    assert.equal(layout.BYTES, 4);
    assert.equal(layout.ALIGN, 4);
    assert.equal(layout.UNLOCKED, 0);
    assert.equal(layout.LOCKED, 1);
    assert.equal(layout.LOCKED_PARKED, 2);
    assert.equal(layout.OWNER_SHIFT, 2);
    assert.equal(layout.STATE_MASK, 3);
  });

  it('is consistent with the assumptions of lib/mutex.js', () => {
    // lib/mutex.js views the memory as an Int32Array of WORDS elements and runs Atomics on it.
    assert.equal(layout.BYTES, layout.WORDS * Int32Array.BYTES_PER_ELEMENT);
    assert.equal(layout.ALIGN % Int32Array.BYTES_PER_ELEMENT, 0, 'Int32Array views need 4-byte alignment');
    // A fresh (zeroed) SharedArrayBuffer is an unlocked mutex.
    assert.equal(layout.UNLOCKED, 0);
    // The state field is exactly the bits below the owner field, and both held states fit in it.
    assert.equal(layout.STATE_MASK, (1 << layout.OWNER_SHIFT) - 1);
    for (const state of [layout.LOCKED, layout.LOCKED_PARKED]) {
      assert.notEqual(state, layout.UNLOCKED);
      assert.equal(state & ~layout.STATE_MASK, 0);
    }
    assert.notEqual(layout.LOCKED, layout.LOCKED_PARKED);
    // This thread's id fits in the owner field of a signed 32-bit word.
    assert.ok(threadId > 0);
    assert.equal(((threadId << layout.OWNER_SHIFT) | layout.LOCKED) >>> layout.OWNER_SHIFT, threadId);
  });

  it('Mutex.BYTES and Mutex.ALIGN are the layout\'s', () => {
    assert.equal(Mutex.BYTES, layout.BYTES);
    assert.equal(Mutex.ALIGN, layout.ALIGN);
    // And the constructor enforces them.
    assert.equal(new Mutex().buffer.byteLength, Mutex.BYTES);
    const sab = new SharedArrayBuffer(Mutex.BYTES * 2);
    assert.equal(new Mutex(sab, Mutex.ALIGN).byteOffset, Mutex.ALIGN);
    assert.throws(() => new Mutex(sab, Mutex.ALIGN / 2), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => new Mutex(sab, Mutex.BYTES + 1), { code: 'ERR_OUT_OF_RANGE' });
  });

  it('the word holds what the layout says: owner | LOCKED, owner | LOCKED_PARKED with a waiter, then 0', async () => {
    const m = new Mutex();
    const holder = m.lock();
    assert.equal(loadWord(m), (threadId << layout.OWNER_SHIFT) | layout.LOCKED);
    // A waiter (here an asynchronous one on this very thread) announces itself with state 2.
    const waiting = m.lockAsync({ signal: testSignal() });
    try {
      assert.equal(queued(m), 1);
      assert.equal(loadWord(m), (threadId << layout.OWNER_SHIFT) | layout.LOCKED_PARKED);
      holder.unlock();
      const guard = await withinLimit(waiting, 'lockAsync after the unlock');
      assert.equal(loadWord(m) >>> layout.OWNER_SHIFT, threadId);
      assert.equal(loadWord(m) & layout.STATE_MASK, layout.LOCKED);
      guard.unlock();
      assert.equal(loadWord(m), layout.UNLOCKED);
      assertClean(m);
    } finally {
      abortTestWaits();
    }
  });
});
