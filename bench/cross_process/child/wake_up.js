'use strict';
// Child mode "wakeup", one side of the wake-up measurement of bench/cross_process_watch.js: the
// hand-off of child/ping_pong.js (the same three locks, the same turns), but each release waits
// first until the other side is surely asleep in its lock(), so that every hand-off goes through
// the waiting process's relay (addon/across_processes/cross_process.h) rather than to a waiter still spinning.
// The releaser stamps the region with the time (process.hrtime: CLOCK_MONOTONIC, one clock for
// every process) just before it unlocks; the side that acquires reports how long after that its
// lock() returned. Each side's relay watches spec.watched more words that nobody releases.
const { Mutex } = require('../../../lib');
const { elapsedNs } = require('../../support/stats');
const { SLOT } = require('../layout');
const { readyThenGo, openRegion } = require('./protocol');
const { watchHeldWords } = require('./watching');

// Far longer than a contended lock() spins before it parks.
const ASLEEP_MS = 0.5;
const pause = new Int32Array(new SharedArrayBuffer(4));

function sides(spec) {
  const memory = openRegion(spec);
  if (spec.watched) watchHeldWords(memory, spec, spec.watched);
  return {
    locks: SLOT.PING.map((offset) => new Mutex(memory, spec.slice + offset)),
    stamp: new BigInt64Array(memory.buffer, spec.slice + SLOT.STAMP, 1),
  };
}

function release({ locks, stamp }, i) {
  Atomics.wait(pause, 0, 0, ASLEEP_MS);
  Atomics.store(stamp, 0, process.hrtime.bigint());
  locks[i].unlock();
}

// The wake-up's time in ns, once lock() of locks[i] returned.
function acquire({ locks, stamp }, i) {
  locks[i].lock();
  return elapsedNs(Atomics.load(stamp, 0));
}

// A releases L(j) and waits for L(j + 2); B, asleep on L(j), takes it and releases L(j + 2).
// Both keep the samples after the first `warmup` hand-offs of theirs.
async function wakeUp(spec) {
  const both = sides(spec);
  const { locks } = both;
  const lead = spec.role === 'a';
  if (lead) {
    locks[0].lock();
    locks[1].lock();
  } else {
    locks[2].lock();
  }
  await readyThenGo();
  const total = spec.warmup + spec.handOffs;
  const samples = [];
  const keep = (j, ns) => j >= spec.warmup && samples.push(ns);
  if (lead) {
    for (let j = 0; j < total; j++) {
      release(both, j % 3);
      keep(j, acquire(both, (j + 2) % 3));
    }
    locks[total % 3].unlock();
    locks[(total + 1) % 3].unlock();
  } else {
    keep(0, acquire(both, 0));
    for (let j = 0; j < total; j++) {
      release(both, (j + 2) % 3);
      if (j + 1 < total) keep(j + 1, acquire(both, (j + 1) % 3));
    }
    locks[total % 3].lock();
    locks[total % 3].unlock();
    locks[(total + 2) % 3].unlock();
  }
  return { samples };
}

module.exports = { wakeUp };
