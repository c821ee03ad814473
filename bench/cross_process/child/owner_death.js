'use strict';
// Child modes "death" and "holder", the owner-death measurement. The death coordinator starts a
// holder, which takes the lock and keeps it; the coordinator SIGKILLs it and times how long its
// own acquisition takes to be refused with ERR_PARKLOCK_OWNER_DIED, which hands it the lock. It
// releases the lock for the next holder, `kills` times over. The three variants differ in when
// the coordinator asks for the lock, and from when they time.
//
// The coordinator runs in a child of its own, not in the parent, so that the parent's event loop
// (and its other children) stay out of the times.
const { Mutex } = require('../../../lib');
const { elapsedNs } = require('../../support/stats');
const { SLOT } = require('../layout');
const { forkChild } = require('../processes');
const { readyThenGo, openRegion } = require('./protocol');

// How long a parked lockAsync() gets to settle into its wait before the holder is killed.
const PARK_MS = 20;
const HOLDER_START_MS = 30_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function holderLocked(holder) {
  let timer;
  return new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`the holder (pid ${holder.pid}) did not lock within ${HOLDER_START_MS} ms`)),
      HOLDER_START_MS);
    holder.listen(
      (message) => {
        if (message && message.type === 'locked') resolve();
        else if (message && message.type === 'failed') reject(new Error(`the holder failed: ${message.reason}`));
      },
      reject,
    );
    holder.closed.then(({ code, signal }) => {
      const tail = holder.stderr();
      reject(new Error(`the holder (pid ${holder.pid}) ended (${signal || `code ${code}`}) before it locked` +
        `${tail ? `: ${tail}` : ''}`));
    });
  }).finally(() => clearTimeout(timer));
}

// ms since `fromNs` (an hrtime bigint) if `error` is the owner-died report; the acquirer holds
// the lock then, and releases it for the next kill.
function ownerDiedAfter({ guard, error, at }, fromNs) {
  if (error === undefined) {
    guard.unlock();
    throw new Error('the lock was acquired without ERR_PARKLOCK_OWNER_DIED although its holder was killed');
  }
  if (error.code !== 'ERR_PARKLOCK_OWNER_DIED') throw error;
  error.guard.unlock();
  return elapsedNs(fromNs, at) / 1e6;
}

function lockNow(mutex) {
  try {
    const guard = mutex.lock();
    return { guard, at: process.hrtime.bigint() };
  } catch (error) {
    return { error, at: process.hrtime.bigint() };
  }
}

const VARIANTS = {
  // A waiter parked before the holder died learns of it from its process's relay, which looks at
  // the holders of the words it watches every so often.
  async pending(mutex, holder) {
    const outcome = mutex.lockAsync().then(
      (guard) => ({ guard, at: process.hrtime.bigint() }),
      (error) => ({ error, at: process.hrtime.bigint() }),
    );
    await sleep(PARK_MS);
    const killedAt = process.hrtime.bigint();
    holder.kill();
    return ownerDiedAfter(await outcome, killedAt);
  },
  // lock() right after kill(): the holder may still be dying, so the newcomer may have to park.
  newcomer(mutex, holder) {
    const killedAt = process.hrtime.bigint();
    holder.kill();
    return ownerDiedAfter(lockNow(mutex), killedAt);
  },
  // lock() once the holder is reaped: how long the newcomer's own check takes, measured from the
  // lock() call (not from kill()).
  async reaped(mutex, holder) {
    holder.kill();
    await holder.closed;
    const calledAt = process.hrtime.bigint();
    return ownerDiedAfter(lockNow(mutex), calledAt);
  },
};

async function killOnce(spec, mutex) {
  const holder = forkChild({ mode: 'holder', region: spec.region, slice: spec.slice });
  try {
    await holderLocked(holder);
    if (mutex.holderProcess !== holder.pid) {
      throw new Error(`the holder (pid ${holder.pid}) said it locked, but the lock's holder is ${mutex.holderProcess}`);
    }
    return await VARIANTS[spec.variant](mutex, holder);
  } finally {
    holder.kill();
    await holder.closed;
  }
}

async function death(spec) {
  const mutex = new Mutex(openRegion(spec), spec.slice + SLOT.LOCK);
  await readyThenGo();
  const samples = [];
  for (let k = 0; k < spec.kills; k++) samples.push(await killOnce(spec, mutex));
  return { samples };
}

// Takes the lock and keeps it until killed (or until its coordinator is gone: see main.js).
function holder(spec) {
  const mutex = new Mutex(openRegion(spec), spec.slice + SLOT.LOCK);
  mutex.lock();
  process.send({ type: 'locked' });
  return new Promise(() => {});
}

module.exports = { death, holder };
