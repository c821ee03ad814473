'use strict';
// Child mode "pingpong", one side of the hand-off measurement: two processes pass control back
// and forth through three locks and nothing else, so that every hand-off is one release waking
// the other process's blocked acquisition (a turn word polled under one lock would measure how
// often the loser retries as much as the hand-off).
//
// A holds L0 and L1, B holds L2. A's step j releases L(j) and waits for L(j+2); B, blocked on
// L(j), takes it and releases L(j+2), handing control back. Each side always holds two of the
// three locks, so neither runs ahead. A times its steps: each is a round trip, two hand-offs.
// flock_helper.c runs the same steps.
const fs = require('node:fs');
const { Mutex } = require('../../../lib');
const { elapsedNs } = require('../../support/stats');
const { SLOT } = require('../layout');
const { readyThenGo, openRegion } = require('./protocol');

function pingPongLocks(spec) {
  if (spec.impl === 'parklock') {
    const memory = openRegion(spec);
    return SLOT.PING.map((offset) => new Mutex(memory, spec.slice + offset));
  }
  const { flockSync } = require(spec.module);
  return spec.lockFiles.map((file) => {
    const fd = fs.openSync(file, 'r+');
    return { lock: () => flockSync(fd, 'ex'), unlock: () => flockSync(fd, 'un') };
  });
}

// Side A: the round-trip times (ns) after the first `warmup` ones, which include JIT compilation
// and page faults.
function leadRounds(locks, warmup, total) {
  const samples = [];
  for (let j = 0; j < total; j++) {
    const start = process.hrtime.bigint();
    locks[j % 3].unlock();
    locks[(j + 2) % 3].lock();
    if (j >= warmup) samples.push(elapsedNs(start));
  }
  locks[total % 3].unlock();
  locks[(total + 1) % 3].unlock();
  return samples;
}

function followRounds(locks, total) {
  locks[0].lock();
  for (let j = 0; j < total; j++) {
    locks[(j + 2) % 3].unlock();
    locks[(j + 1) % 3].lock();
  }
  locks[(total + 2) % 3].unlock();
  locks[total % 3].unlock();
}

async function pingPong(spec) {
  const locks = pingPongLocks(spec);
  const total = spec.warmup + spec.rounds;
  if (spec.role === 'a') {
    locks[0].lock();
    locks[1].lock();
  } else {
    locks[2].lock();
  }
  await readyThenGo();
  if (spec.role === 'a') return { samples: leadRounds(locks, spec.warmup, total) };
  followRounds(locks, total);
  return { samples: [] };
}

module.exports = { pingPong };
