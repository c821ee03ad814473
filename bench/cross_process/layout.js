'use strict';
// Where things sit in the run's sharedMemory() region, for the parent and the children alike.
//
// Each measurement (one case, one repetition) gets a 4 KiB slice of the run's one region: a
// process can map only so many regions, and the parent would otherwise map one per measurement.
// Slices are never reused, so every measurement starts from zeroed words: unlocked locks, a
// counter at 0, the stop word clear.
//
// Inside a slice every word sits alone in a 64-byte slot: the counter is written on every
// acquisition and the stop word read on every one, and on one cache line each write would also
// evict every reader's copy.
const SLICE_BYTES = 4096;
// STAMP: when the latest release of a wake-up measurement (child/wake_up.js) was made.
const SLOT = { LOCK: 0, COUNTER: 64, STOP: 128, PING: [192, 256, 320], STAMP: 384 };

module.exports = { SLICE_BYTES, SLOT };
