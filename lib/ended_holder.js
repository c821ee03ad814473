'use strict';
// Who an OwnerDiedError names: the Node threadId and the pid of the holder that ended holding the
// lock, as far as they can be known. The addon reports the ended owner's Node threadId for a
// thread of this process; in sharedMemory() it reports nothing, and a region identity says who it
// was (its pid, its threadId where it was a thread here) only until its slot is taken again,
// which the next thread to need one may do at once: the first thing a new process does with a
// region may erase who the dead holder was. So a lock in a region describes its holder whenever it
// finds the lock taken by somebody new (HolderSightings), and the last description is the one an
// OwnerDiedError reports: the holder this thread saw last, which is the one that ended unless the
// lock changed hands unseen meanwhile.
const native = require('./native');

// A lock in a SharedArrayBuffer: every holder is a thread of this process.
const HERE = Object.freeze({ threadId: null, pid: process.pid });
// A lock in a region whose holders are not looked at (a Condition's relock, a Once's runner).
const UNKNOWN = Object.freeze({ threadId: null, pid: null });

class HolderSightings {
  #words;
  #identity = 0;
  #seen = UNKNOWN;

  // `words`: the lock's words in a region, whose `identity` names its holder now (0: nobody).
  constructor(words, identity) {
    this.#words = words;
    this.see(identity);
  }

  // A description costs a call into the addon: it is made only for a holder not seen before.
  see(identity) {
    if (identity === 0 || identity === this.#identity) return;
    const who = native.regionHolder(this.#words, identity);
    if (who === null) return;
    this.#identity = identity;
    this.#seen = Object.freeze({ threadId: who[1], pid: who[0] });
  }

  get seen() {
    return this.#seen;
  }
}

// The { threadId, pid } of the owner whose end the latest OWNER_DIED settlement of this thread
// reported; `sightings` is the lock's HolderSightings, or HERE or UNKNOWN.
function endedHolder(sightings = HERE) {
  const reported = native.endedOwner();
  const seen = sightings instanceof HolderSightings ? sightings.seen : sightings;
  return { threadId: reported ?? seen.threadId, pid: seen.pid };
}

module.exports = { HolderSightings, endedHolder, HERE, UNKNOWN };
