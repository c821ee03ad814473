'use strict';
// The lock table (./table_layout.js) and every change made to it. Each method that reads or
// writes the table runs between enter() and leave(), holding the table's Mutex, and never waits:
// waiting happens outside, on a record's LIVENESS or WAKE (./lock_waits.js).
//
// Invariants, true whenever the table's Mutex is free:
// - a name's queue holds its held records first, then its pending ones in arrival order, and
//   FIRST_PENDING is the first pending one;
// - the first pending record cannot be granted: an exclusive one waits for HELD to reach 0, a
//   shared one for an exclusive holder to leave (a grant pass after every change keeps it so);
// - a record in use has its LIVENESS held by its requester (or by a thread that found the
//   requester ended and is about to free it), so a waiter learns of a holder's end by waiting
//   on it.
const { threadId } = require('node:worker_threads');
const { nowTenths } = require('./wall_clock');
const { Mutex } = require('../mutex');
const { Semaphore } = require('../semaphore');
const { OwnerDiedError } = require('../errors');
const native = require('../native');
const { handleOf } = require('../primitive');
const { registerTable } = require('./wait_names');
const {
  HEADER,
  IDLE_RING,
  IDLE_AT,
  MAGIC_VALUE,
  SLOT,
  SLOT_WORDS,
  RECORD,
  RECORD_WORDS,
  STATE,
  MODE,
  SLOTS,
  RECORDS,
  BUCKETS,
  BUCKETS_AT,
  SLOTS_AT,
  RECORDS_AT,
} = require('./table_layout');

const PID = process.pid;
// How many free records allocate() tries whose LIVENESS another thread still holds (a thread
// that took it over from an ended requester and has not yet given it back) before taking a new one.
const ALLOCATION_TRIES = 8;
// How long the first waiter of a name may see others take it first before it is handed the name.
const FAIR_TENTHS = 10;

function hashOf(name) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i += 1) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193);
  return hash;
}

// Takes a Mutex that may have been left held by an ended thread; true if it was (it is held now
// either way, unless taking it timed out: then null).
function takeOver(mutex, timeoutMs) {
  try {
    return mutex.tryLock(timeoutMs) ? false : null;
  } catch (error) {
    if (!(error instanceof OwnerDiedError)) throw error;
    return true;
  }
}

class LockTable {
  #words;
  #place;
  #mutex;
  #liveness = [];
  #wake = [];
  // For each record of this thread whose request() callback runs: what to call if it is stolen
  // (a steal by this thread rejects that request at once; one by another thread or process is
  // found when the callback settles).
  stolenHere = [];
  // The record this thread keeps between its requests (KEPT), or -1: taking it again needs neither
  // the free list nor its LIVENESS taken anew.
  #kept = -1;

  // `words`: an Int32Array over the whole table; `place(Class, wordIndex)`: the primitive of that
  // class whose words start at wordIndex of the table; `path`: its file, null for the process's.
  constructor(words, place, path = null) {
    this.#words = words;
    this.#place = place;
    this.#mutex = place(Mutex, HEADER.MUTEX);
    this.path = path;
    registerTable(this, native.addressOf(handleOf(this.#mutex)));
  }

  // Whether the memory holds a lock table (or nothing yet, which makes it one).
  isLockTable() {
    const seen = Atomics.compareExchange(this.#words, HEADER.MAGIC, 0, MAGIC_VALUE);
    return seen === 0 || seen === MAGIC_VALUE;
  }

  // Takes the table's Mutex. A thread or process that ended holding it may have left any change
  // half made: the table is rebuilt from its records before anyone reads it.
  enter() {
    try {
      this.#mutex.lock();
    } catch (error) {
      if (!(error instanceof OwnerDiedError)) throw error;
      this.#rebuild();
    }
  }

  leave() {
    this.#mutex.unlock();
  }

  liveness(record) {
    return (this.#liveness[record] ??= this.#place(Mutex, RECORDS_AT + record * RECORD_WORDS + RECORD.LIVENESS));
  }

  wake(record) {
    return (this.#wake[record] ??= this.#place(Semaphore, RECORDS_AT + record * RECORD_WORDS + RECORD.WAKE));
  }

  // --- Fields ---

  slotField(slot, field) {
    return this.#words[SLOTS_AT + slot * SLOT_WORDS + field];
  }

  #setSlot(slot, field, value) {
    this.#words[SLOTS_AT + slot * SLOT_WORDS + field] = value;
  }

  // Plain reads and writes: the table's Mutex orders them. Only STATE and ACKNOWLEDGED, which the
  // requester reads and writes without it, go through Atomics (#setState(), acknowledgeGrant()).
  field(record, field) {
    return this.#words[RECORDS_AT + record * RECORD_WORDS + field];
  }

  #set(record, field, value) {
    this.#words[RECORDS_AT + record * RECORD_WORDS + field] = value;
  }

  #setState(record, state) {
    Atomics.store(this.#words, RECORDS_AT + record * RECORD_WORDS + RECORD.STATE, state);
  }

  // Read without the table's Mutex, by the requester: whether its record is granted, and that it
  // has seen so (ACKNOWLEDGED).
  acknowledgeGrant(record) {
    const at = RECORDS_AT + record * RECORD_WORDS;
    if (Atomics.load(this.#words, at + RECORD.STATE) !== STATE.HELD) return false;
    Atomics.store(this.#words, at + RECORD.ACKNOWLEDGED, 1);
    return true;
  }

  nameOf(slot) {
    const length = this.slotField(slot, SLOT.LENGTH);
    const at = SLOTS_AT + slot * SLOT_WORDS + SLOT.NAME;
    let name = '';
    for (let i = 0; i < length; i += 1) {
      const word = this.#words[at + (i >> 1)];
      name += String.fromCharCode(i & 1 ? word >>> 16 : word & 0xffff);
    }
    return name;
  }

  #nameIs(slot, name, hash) {
    const base = SLOTS_AT + slot * SLOT_WORDS;
    if (this.#words[base + SLOT.HASH] !== hash || this.#words[base + SLOT.LENGTH] !== name.length) return false;
    for (let i = 0; i < name.length; i += 2) {
      const word = this.#words[base + SLOT.NAME + (i >> 1)];
      if ((word & 0xffff) !== name.charCodeAt(i)) return false;
      if (i + 1 < name.length && word >>> 16 !== name.charCodeAt(i + 1)) return false;
    }
    return true;
  }

  #writeName(slot, name, hash) {
    const base = SLOTS_AT + slot * SLOT_WORDS;
    for (let i = 0; i < name.length; i += 2) {
      const high = i + 1 < name.length ? name.charCodeAt(i + 1) : 0;
      this.#words[base + SLOT.NAME + (i >> 1)] = name.charCodeAt(i) | (high << 16);
    }
    this.#words[base + SLOT.HASH] = hash;
    this.#words[base + SLOT.LENGTH] = name.length;
  }

  // --- Names ---

  // The slot of `name`, or -1 if nobody holds or waits for it.
  findSlot(name) {
    const hash = hashOf(name);
    for (let link = this.#words[BUCKETS_AT + ((hash >>> 0) % BUCKETS)]; link !== 0; ) {
      const slot = link - 1;
      if (this.#nameIs(slot, name, hash)) return slot;
      link = this.slotField(slot, SLOT.NEXT);
    }
    return -1;
  }

  #addSlot(name) {
    let slot = this.#words[HEADER.FREE_SLOT] - 1;
    if (slot >= 0) {
      this.#words[HEADER.FREE_SLOT] = this.slotField(slot, SLOT.NEXT);
    } else if (this.#words[HEADER.SLOTS_USED] < SLOTS) {
      slot = this.#words[HEADER.SLOTS_USED]++;
    } else {
      return -1;
    }
    const hash = hashOf(name);
    const bucket = BUCKETS_AT + ((hash >>> 0) % BUCKETS);
    this.#writeName(slot, name, hash);
    this.#setSlot(slot, SLOT.NEXT, this.#words[bucket]);
    this.#words[bucket] = slot + 1;
    return slot;
  }

  // Frees a slot nobody holds or waits for, unless it still has an owner's death to report (and
  // `evenIfDied` is false: the table is short of slots).
  #reclaimSlot(slot, evenIfDied = false) {
    if (this.slotField(slot, SLOT.FIRST) !== 0) return;
    if (this.slotField(slot, SLOT.DIED) !== 0 && !evenIfDied) return;
    const hash = this.slotField(slot, SLOT.HASH);
    let at = BUCKETS_AT + ((hash >>> 0) % BUCKETS);
    while (this.#words[at] !== slot + 1) at = SLOTS_AT + (this.#words[at] - 1) * SLOT_WORDS + SLOT.NEXT;
    this.#words[at] = this.slotField(slot, SLOT.NEXT);
    const base = SLOTS_AT + slot * SLOT_WORDS;
    this.#words.fill(0, base + SLOT.HASH, base + SLOT.NAME);
    this.#words[base + SLOT.LENGTH] = 0;
    this.#words[base + SLOT.GENERATION] += 1;
    this.#words[base + SLOT.NEXT] = this.#words[HEADER.FREE_SLOT];
    this.#words[HEADER.FREE_SLOT] = slot + 1;
  }

  // Frees `slot` if no request holds or waits for it (after an ifAvailable request that found the
  // name taken, or a request the table had no record for).
  forget(slot) {
    this.#reclaimSlot(slot);
  }

  // A name nobody holds or waits for any more keeps its slot while it is among the IDLE_RING most
  // recently unused, so that a name used again and again is not written and unlinked each time;
  // the one this pushes out of the ring is freed, if still unused, so that any number of names
  // used one after another keep few slots (and few pages of memory) in use.
  #becameIdle(slot) {
    const words = this.#words;
    const next = words[HEADER.IDLE_NEXT];
    const at = IDLE_AT + next * 2;
    const evicted = words[at] - 1;
    const generation = words[at + 1];
    words[at] = slot + 1;
    words[at + 1] = this.slotField(slot, SLOT.GENERATION);
    words[HEADER.IDLE_NEXT] = (next + 1) % IDLE_RING;
    if (evicted >= 0 && evicted !== slot && this.slotField(evicted, SLOT.GENERATION) === generation &&
        this.slotField(evicted, SLOT.LENGTH) !== 0) {
      this.#reclaimSlot(evicted);
    }
  }

  // The slot of `name`, made if needed; -1 if the table has no room left for another name even
  // after freeing those kept only to report an owner's death.
  slotFor(name) {
    const found = this.findSlot(name);
    if (found >= 0) return found;
    let slot = this.#addSlot(name);
    if (slot < 0) {
      this.#forEachSlot((other) => this.#reclaimSlot(other));
      slot = this.#addSlot(name);
    }
    if (slot < 0) {
      this.sweep();
      this.#forEachSlot((other) => this.#reclaimSlot(other, true));
      slot = this.#addSlot(name);
    }
    return slot;
  }

  #forEachSlot(visit) {
    const used = this.#words[HEADER.SLOTS_USED];
    for (let slot = 0; slot < used; slot += 1) if (this.slotField(slot, SLOT.LENGTH) !== 0) visit(slot);
  }

  // --- Records ---

  // A free record, its LIVENESS now held by this thread; -1 if there is none.
  #allocate() {
    const kept = this.#kept;
    if (kept >= 0) {
      this.#kept = -1;
      // A rebuild or a sweep leaves a kept record alone, but a table rebuilt by a thread that ended
      // mid-change may have been given it back: it is still this thread's only if still KEPT.
      const mine = this.liveness(kept).isHeldByCurrentThread;
      if (mine && this.field(kept, RECORD.STATE) === STATE.KEPT) return kept;
      if (mine) this.liveness(kept).unlock();
    }
    for (let tries = 0; tries < ALLOCATION_TRIES && this.#words[HEADER.FREE_HEAD] !== 0; tries += 1) {
      const record = this.#words[HEADER.FREE_HEAD] - 1;
      this.#words[HEADER.FREE_HEAD] = this.field(record, RECORD.NEXT);
      if (this.#words[HEADER.FREE_HEAD] === 0) this.#words[HEADER.FREE_TAIL] = 0;
      if (takeOver(this.liveness(record), 0) !== null) return record;
      this.#pushFree(record);
    }
    if (this.#words[HEADER.RECORDS_USED] < RECORDS) {
      const record = this.#words[HEADER.RECORDS_USED]++;
      takeOver(this.liveness(record), Infinity);
      return record;
    }
    return -1;
  }

  // At the tail: the free list is a queue, so that a record whose LIVENESS another thread still
  // holds for a moment (one that took it over from an ended requester) comes round last.
  #pushFree(record) {
    this.#set(record, RECORD.NEXT, 0);
    const tail = this.#words[HEADER.FREE_TAIL];
    if (tail === 0) this.#words[HEADER.FREE_HEAD] = record + 1;
    else this.#set(tail - 1, RECORD.NEXT, record + 1);
    this.#words[HEADER.FREE_TAIL] = record + 1;
  }

  // Makes a request of this thread for `slot` in `mode`: granted at once if the name is free (or
  // shares with its holders) and nobody waits, or if the name is free and its first waiter has
  // waited less than FAIR_TENTHS (a running thread takes a free lock rather than wait for a sleeping
  // one to wake, as parklock's Mutex does); queued otherwise. Returns the record, or -1 if the
  // table is full.
  open(slot, mode, blocking = false) {
    let record = this.#allocate();
    if (record < 0) {
      this.sweep();
      record = this.#allocate();
      if (record < 0) return -1;
    }
    const at = RECORDS_AT + record * RECORD_WORDS;
    const words = this.#words;
    Atomics.store(words, at + RECORD.WAKE, 0);
    words[at + RECORD.SLOT] = slot;
    words[at + RECORD.MODE] = mode;
    words[at + RECORD.PID] = PID;
    words[at + RECORD.THREAD] = threadId;
    words[at + RECORD.DIED] = 0;
    words[at + RECORD.BLOCKING] = blocking ? 1 : 0;
    words[at + RECORD.SEQUENCE] = ++words[HEADER.SEQUENCE];
    Atomics.store(words, at + RECORD.ACKNOWLEDGED, 0);
    Atomics.store(words, at + RECORD.STATE, STATE.PENDING);
    const head = this.slotField(slot, SLOT.FIRST_PENDING) - 1;
    if (head < 0) {
      this.#append(slot, record);
      this.#setSlot(slot, SLOT.FIRST_PENDING, record + 1);
      if (this.#fits(slot, mode)) this.#grant(slot, record);
    } else if (this.slotField(slot, SLOT.HELD) === 0 && !this.#waitedLong(head)) {
      this.#insertBefore(slot, record, head);
      this.#hold(slot, record);
    } else {
      this.#append(slot, record);
    }
    if (this.field(record, RECORD.STATE) === STATE.PENDING) words[at + RECORD.SINCE] = nowTenths();
    return record;
  }

  // Whether a request in `mode` is compatible with the name's holders.
  #fits(slot, mode) {
    return mode === MODE.SHARED ? this.slotField(slot, SLOT.EXCLUSIVE) === 0 : this.slotField(slot, SLOT.HELD) === 0;
  }

  #waitedLong(record) {
    return ((nowTenths() - this.field(record, RECORD.SINCE)) | 0) >= FAIR_TENTHS;
  }

  #insertBefore(slot, record, next) {
    const prev = this.field(next, RECORD.PREV);
    this.#set(record, RECORD.PREV, prev);
    this.#set(record, RECORD.NEXT, next + 1);
    this.#set(next, RECORD.PREV, record + 1);
    if (prev === 0) this.#setSlot(slot, SLOT.FIRST, record + 1);
    else this.#set(prev - 1, RECORD.NEXT, record + 1);
  }

  #append(slot, record) {
    const last = this.slotField(slot, SLOT.LAST);
    this.#set(record, RECORD.PREV, last);
    this.#set(record, RECORD.NEXT, 0);
    if (last === 0) this.#setSlot(slot, SLOT.FIRST, record + 1);
    else this.#set(last - 1, RECORD.NEXT, record + 1);
    this.#setSlot(slot, SLOT.LAST, record + 1);
  }

  #unlink(slot, record) {
    const prev = this.field(record, RECORD.PREV);
    const next = this.field(record, RECORD.NEXT);
    if (prev === 0) this.#setSlot(slot, SLOT.FIRST, next);
    else this.#set(prev - 1, RECORD.NEXT, next);
    if (next === 0) this.#setSlot(slot, SLOT.LAST, prev);
    else this.#set(next - 1, RECORD.PREV, prev);
    if (this.slotField(slot, SLOT.FIRST_PENDING) === record + 1) this.#setSlot(slot, SLOT.FIRST_PENDING, next);
  }

  // Whether a request for `slot` in `mode` would be granted now (for ifAvailable).
  availableNow(slot, mode) {
    if (this.slotField(slot, SLOT.FIRST_PENDING) !== 0) return false;
    return mode === MODE.SHARED ? this.slotField(slot, SLOT.EXCLUSIVE) === 0 : this.slotField(slot, SLOT.HELD) === 0;
  }

  // Whether this thread holds `slot` in a mode that a request in `mode` would wait for: a
  // blocking request would then wait for itself.
  heldHereAgainst(slot, mode) {
    for (let link = this.slotField(slot, SLOT.FIRST); link !== 0; link = this.field(link - 1, RECORD.NEXT)) {
      const record = link - 1;
      if (this.field(record, RECORD.STATE) !== STATE.HELD) break;
      if (this.field(record, RECORD.PID) !== PID || this.field(record, RECORD.THREAD) !== threadId) continue;
      if (mode === MODE.EXCLUSIVE || this.field(record, RECORD.MODE) === MODE.EXCLUSIVE) return true;
    }
    return false;
  }

  // Makes `record` a holder of `slot` (the caller has placed it among the held records).
  #hold(slot, record) {
    this.#setSlot(slot, SLOT.HELD, this.slotField(slot, SLOT.HELD) + 1);
    if (this.field(record, RECORD.MODE) === MODE.EXCLUSIVE) this.#setSlot(slot, SLOT.EXCLUSIVE, 1);
    if (this.slotField(slot, SLOT.DIED) !== 0) {
      this.#set(record, RECORD.DIED, 1);
      this.#set(record, RECORD.DEAD_PID, this.slotField(slot, SLOT.DEAD_PID));
      this.#set(record, RECORD.DEAD_THREAD, this.slotField(slot, SLOT.DEAD_THREAD));
      this.#setSlot(slot, SLOT.DIED, 0);
    }
    this.#setState(record, STATE.HELD);
  }

  // Grants the pending records of `slot` that fit, in order, and wakes them; wakes the new first
  // pending record too, which from then on looks out for the holders' end.
  // `running`: a record whose requester is granted as it asks, and needs no waking.
  #grant(slot, running = -1) {
    const before = this.slotField(slot, SLOT.FIRST_PENDING);
    let link = before;
    while (link !== 0 && this.#fits(slot, this.field(link - 1, RECORD.MODE))) {
      const record = link - 1;
      this.#hold(slot, record);
      if (record !== running) this.wake(record).release();
      link = this.field(record, RECORD.NEXT);
    }
    this.#setSlot(slot, SLOT.FIRST_PENDING, link);
    if (link !== 0 && link !== before) this.wake(link - 1).release();
  }

  // After a holder left `slot`: if the first waiter fits now, it is handed the name once it has
  // waited FAIR_TENTHS; before that it is only woken to take it, and a running thread may take it
  // first (the first waiter then waits again).
  #released(slot) {
    const head = this.slotField(slot, SLOT.FIRST_PENDING) - 1;
    if (head < 0 || !this.#fits(slot, this.field(head, RECORD.MODE))) return;
    if (this.#waitedLong(head)) this.#grant(slot);
    else this.wake(head).release();
  }

  // The first waiter of its name, woken, takes the name if it fits (with those behind it that fit
  // too); true if `record` holds it now.
  claim(record) {
    const slot = this.field(record, RECORD.SLOT);
    if (this.slotField(slot, SLOT.FIRST_PENDING) === record + 1 && this.#fits(slot, this.field(record, RECORD.MODE))) {
      this.#grant(slot);
    }
    return this.acknowledgeGrant(record);
  }

  // Whether `record` is the first waiter of its name: the one that looks out for its holders' end.
  isFirstWaiter(record) {
    return this.slotField(this.field(record, RECORD.SLOT), SLOT.FIRST_PENDING) === record + 1;
  }

  // Frees the holders of `record`'s name whose thread or process has ended; the first waiter calls
  // it each time its wait times out. A holder's LIVENESS is held by its requester for as long as
  // the record is in use, so taking it over is how an end is found, here or in another process.
  freeEndedHolders(record) {
    this.freeEndedHoldersOf(this.field(record, RECORD.SLOT));
  }

  // The same for the holders of `slot`: what tryLock() and ifAvailable do before they answer that
  // a name is taken, so that a holder that ended never keeps it from them.
  freeEndedHoldersOf(slot) {
    for (let link = this.slotField(slot, SLOT.FIRST); link !== 0 && link !== this.slotField(slot, SLOT.FIRST_PENDING); ) {
      const held = link - 1;
      link = this.field(held, RECORD.NEXT);
      this.#freeIfEnded(held);
    }
  }

  // Frees `record` (in use) if its requester has ended: its LIVENESS, which the requester holds
  // while the record is in use, is then taken over; one held by this thread is left alone.
  #freeIfEnded(record) {
    const liveness = this.liveness(record);
    if (liveness.isHeldByCurrentThread) return;
    const ended = takeOver(liveness, 0);
    if (ended === null) return;
    if (ended) this.endedRecord(record, this.field(record, RECORD.GENERATION));
    liveness.unlock();
  }

  // Whether a holder of this thread stands in the way of `record`, which this thread waits for
  // blocked: it could never leave.
  blockedByThisThread(record) {
    return this.heldHereAgainst(this.field(record, RECORD.SLOT), this.field(record, RECORD.MODE));
  }

  // The cycle of blocked requests that `record` (pending, blocking, of this thread) closes, or null:
  // each step a thread blocked in lock() for a name that a thread of the next step holds or waits
  // ahead of it for, the last step's name held by this thread. Threads with only Promise requests
  // pending are not blocked, so they are never steps: their event loops may still release.
  deadlockCycle(record) {
    const blockedBy = new Map();
    const used = this.#words[HEADER.RECORDS_USED];
    for (let other = 0; other < used; other += 1) {
      if (this.field(other, RECORD.STATE) === STATE.PENDING && this.field(other, RECORD.BLOCKING) === 1) {
        blockedBy.set(`${this.field(other, RECORD.PID)}:${this.field(other, RECORD.THREAD)}`, other);
      }
    }
    const self = `${PID}:${threadId}`;
    const path = [];
    const visited = new Set();
    const search = (waiting) => {
      if (visited.has(waiting)) return false;
      visited.add(waiting);
      path.push(waiting);
      for (let link = this.slotField(this.field(waiting, RECORD.SLOT), SLOT.FIRST); link !== waiting + 1 && link !== 0; ) {
        const ahead = link - 1;
        link = this.field(ahead, RECORD.NEXT);
        const owner = `${this.field(ahead, RECORD.PID)}:${this.field(ahead, RECORD.THREAD)}`;
        if (owner === self) return true;
        const next = this.field(ahead, RECORD.STATE) === STATE.PENDING ? ahead : blockedBy.get(owner);
        if (next !== undefined && this.field(next, RECORD.BLOCKING) === 1 && search(next)) return true;
      }
      path.pop();
      return false;
    };
    if (!search(record)) return null;
    return path.map((step) => ({
      pid: this.field(step, RECORD.PID),
      threadId: this.field(step, RECORD.THREAD),
      waitsFor: this.nameOf(this.field(step, RECORD.SLOT)),
    }));
  }

  // Ends a request of this thread, held or pending: takes it out of its queue and lets the next in.
  // The record is kept for this thread's next request, or freed. Returns whether it had been
  // stolen.
  close(record) {
    const state = this.field(record, RECORD.STATE);
    if (state !== STATE.STOLEN) this.#remove(record);
    if (this.#kept < 0) {
      this.#kept = record;
      this.#setState(record, STATE.KEPT);
      this.#set(record, RECORD.GENERATION, this.field(record, RECORD.GENERATION) + 1);
    } else {
      this.#free(record);
      this.liveness(record).unlock();
    }
    return state === STATE.STOLEN;
  }

  #remove(record) {
    const slot = this.field(record, RECORD.SLOT);
    this.#unlink(slot, record);
    if (this.field(record, RECORD.STATE) === STATE.HELD) {
      const held = this.slotField(slot, SLOT.HELD) - 1;
      this.#setSlot(slot, SLOT.HELD, held);
      if (held === 0) this.#setSlot(slot, SLOT.EXCLUSIVE, 0);
      this.#released(slot);
    } else {
      // A first waiter that leaves may let those behind it in.
      const head = this.slotField(slot, SLOT.FIRST_PENDING) - 1;
      if (head >= 0 && this.#fits(slot, this.field(head, RECORD.MODE))) this.#grant(slot);
      else if (head >= 0) this.wake(head).release();
    }
    if (this.slotField(slot, SLOT.FIRST) === 0) this.#becameIdle(slot);
  }

  #free(record) {
    this.#setState(record, STATE.FREE);
    this.#set(record, RECORD.GENERATION, this.field(record, RECORD.GENERATION) + 1);
    this.#pushFree(record);
  }

  // Takes `record` (exclusive, pending, of this thread) to the head of its name's queue, holding
  // it; whoever held the name holds it no more (STOLEN).
  // Returns the records it took the name from.
  steal(record) {
    const slot = this.field(record, RECORD.SLOT);
    const stolen = [];
    this.#unlink(slot, record);
    for (let link = this.slotField(slot, SLOT.FIRST); link !== 0 && link !== this.slotField(slot, SLOT.FIRST_PENDING); ) {
      const held = link - 1;
      link = this.field(held, RECORD.NEXT);
      this.#unlink(slot, held);
      this.#setState(held, STATE.STOLEN);
      stolen.push(held);
    }
    const first = this.slotField(slot, SLOT.FIRST);
    this.#set(record, RECORD.PREV, 0);
    this.#set(record, RECORD.NEXT, first);
    if (first === 0) this.#setSlot(slot, SLOT.LAST, record + 1);
    else this.#set(first - 1, RECORD.PREV, record + 1);
    this.#setSlot(slot, SLOT.FIRST, record + 1);
    this.#setSlot(slot, SLOT.HELD, 1);
    this.#setSlot(slot, SLOT.EXCLUSIVE, 1);
    this.#setState(record, STATE.HELD);
    return stolen;
  }

  // `record` (last seen at `generation`) belongs to a thread or process that ended: frees it, and
  // if its requester had seen it granted, the name's next holder is told. The caller holds its
  // LIVENESS, which it took over, and unlocks it.
  endedRecord(record, generation) {
    if (this.field(record, RECORD.GENERATION) !== generation) return;
    const state = this.field(record, RECORD.STATE);
    if (state === STATE.FREE) return;
    if (state === STATE.KEPT) {
      this.#free(record);
      return;
    }
    if (state === STATE.HELD && Atomics.load(this.#words, RECORDS_AT + record * RECORD_WORDS + RECORD.ACKNOWLEDGED) !== 0) {
      const slot = this.field(record, RECORD.SLOT);
      this.#setSlot(slot, SLOT.DIED, 1);
      this.#setSlot(slot, SLOT.DEAD_PID, this.field(record, RECORD.PID));
      this.#setSlot(slot, SLOT.DEAD_THREAD, this.field(record, RECORD.THREAD));
    }
    if (state !== STATE.STOLEN) this.#remove(record);
    this.#free(record);
  }

  // Frees every record whose requester has ended (query() and a full table call it).
  sweep() {
    const used = this.#words[HEADER.RECORDS_USED];
    for (let record = 0; record < used; record += 1) {
      if (this.field(record, RECORD.STATE) !== STATE.FREE) this.#freeIfEnded(record);
    }
  }

  // { held, pending }: every request in the table, as query() reports them.
  snapshot() {
    const held = [];
    const pending = [];
    this.#forEachSlot((slot) => {
      const name = this.nameOf(slot);
      for (let link = this.slotField(slot, SLOT.FIRST); link !== 0; link = this.field(link - 1, RECORD.NEXT)) {
        const record = link - 1;
        const pid = this.field(record, RECORD.PID);
        const thread = this.field(record, RECORD.THREAD);
        const entry = {
          name,
          mode: this.field(record, RECORD.MODE) === MODE.SHARED ? 'shared' : 'exclusive',
          clientId: `${pid}:${thread}`,
          threadId: thread,
          pid,
        };
        (this.field(record, RECORD.STATE) === STATE.HELD ? held : pending).push(entry);
      }
    });
    return { held, pending };
  }

  // After a thread or process ended holding the table's Mutex, in the middle of a change: rebuilds
  // every link and count from what each record and slot says of itself (its state, name, mode
  // and arrival number), then grants what can be. Waiters that were woken for nothing, or not
  // woken, look again within a slice of their wait (./lock_waits.js).
  #rebuild() {
    const words = this.#words;
    words.fill(0, BUCKETS_AT, BUCKETS_AT + BUCKETS);
    words[HEADER.FREE_SLOT] = 0;
    const slotsUsed = words[HEADER.SLOTS_USED];
    for (let slot = slotsUsed - 1; slot >= 0; slot -= 1) {
      const base = SLOTS_AT + slot * SLOT_WORDS;
      words.fill(0, base + SLOT.FIRST, base + SLOT.DIED);
      if (words[base + SLOT.LENGTH] === 0) {
        words[base + SLOT.NEXT] = words[HEADER.FREE_SLOT];
        words[HEADER.FREE_SLOT] = slot + 1;
        continue;
      }
      const name = this.nameOf(slot);
      const hash = hashOf(name);
      const bucket = BUCKETS_AT + ((hash >>> 0) % BUCKETS);
      words[base + SLOT.HASH] = hash;
      words[base + SLOT.NEXT] = words[bucket];
      words[bucket] = slot + 1;
    }
    words[HEADER.FREE_HEAD] = 0;
    words[HEADER.FREE_TAIL] = 0;
    const live = [];
    const recordsUsed = words[HEADER.RECORDS_USED];
    for (let record = 0; record < recordsUsed; record += 1) {
      const state = this.field(record, RECORD.STATE);
      const slot = this.field(record, RECORD.SLOT);
      const inUse = state === STATE.PENDING || state === STATE.HELD;
      if (inUse && slot >= 0 && slot < slotsUsed && this.slotField(slot, SLOT.LENGTH) !== 0) live.push(record);
      else if (state !== STATE.STOLEN && state !== STATE.KEPT) this.#free(record);
    }
    const order = (record) => (this.field(record, RECORD.STATE) === STATE.HELD ? 0 : 2 ** 32) + (this.field(record, RECORD.SEQUENCE) >>> 0);
    live.sort((a, b) => order(a) - order(b));
    for (const record of live) {
      const slot = this.field(record, RECORD.SLOT);
      this.#append(slot, record);
      if (this.field(record, RECORD.STATE) === STATE.HELD) {
        this.#setSlot(slot, SLOT.HELD, this.slotField(slot, SLOT.HELD) + 1);
        if (this.field(record, RECORD.MODE) === MODE.EXCLUSIVE) this.#setSlot(slot, SLOT.EXCLUSIVE, 1);
      } else if (this.slotField(slot, SLOT.FIRST_PENDING) === 0) {
        this.#setSlot(slot, SLOT.FIRST_PENDING, record + 1);
      }
    }
    this.#forEachSlot((slot) => {
      this.#grant(slot);
      this.#reclaimSlot(slot);
    });
  }
}

module.exports = { LockTable, takeOver };
