'use strict';
// Chaos across processes: for each primitive that waits in sharedMemory(), child processes
// (fixtures/region_chaos_agent.js) hammer one in a region with blocking, timed and Promise waits
// while the test kills random ones with SIGKILL at random moments and starts replacements. Every
// process journals in the region what it does (fixtures/region_chaos.js), so that afterwards the
// invariants are checked exactly, up to what a killed process did between two writes of its
// journal: counts under a Mutex or an RWLock's write lock exact and never two holders, a killed
// holder's death told to a next holder, which repairs; never more permits lent than the Semaphore
// has, and those a killed holder kept still taken; every item through a Condition taken once, and
// none left behind by a lost wake-up; no Latch or Barrier passed early; a Once's effect done once,
// or again after its runner's death was told. Then every survivor exits on its own, and fresh
// processes use the primitive again.
//
// Not asserted, as the README's "Across processes" says: a plain RWLock read hold whose process is
// killed stays counted (so a process is never killed while it asks for or holds one, see GATE in
// the fixtures); a Condition waiter killed stays counted (items are checked, never notify counts);
// a process killed in the nanoseconds between the two stores of an RWLock write or upgradable
// acquisition, a release or a drain leaves it held, or drained, with nobody to report. Such a
// storm ends with its survivors stuck: the test ends it then, saying so, but only when the lock's
// words are exactly what that window leaves (a named hold or a drain whose owner word is 0);
// any other stuck state fails.
//
// PARKLOCK_CHAOS_PROCESS_MS sets each storm's length (default 4000 ms); PARKLOCK_CHAOS_SEED the
// seed of the kills and of the children's choices (a failure names the seed it ran with).
const { describe, it, before, after, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { fork } = require('node:child_process');
const { sharedMemory, Mutex, Condition, Semaphore, RWLock, Latch, Barrier, Once } = require('../lib');
const native = require('../lib/native');
const { layout: RWLOCK_LAYOUT } = require('../lib/rwlock_words');
const { HANG_LIMIT_MS, fixture, tick, waitFor, withinLimit, exitIfKeptAlive, messageFrom, removeTemporary } = require('./helpers');
const {
  LAYOUT,
  FIELD,
  WORD,
  PHASE,
  WRONG_TEXT,
  TABLE,
  RUN_TOLD,
  Ledger,
  entryOffset,
  claimMark,
  giveMarkBack,
  settleMark,
  settleCount,
  startRun,
  random,
  seedOf,
} = require('./fixtures/region_chaos');

exitIfKeptAlive();
const AGENT = fixture('region_chaos_agent.js');
const CHILDREN = 5;
const DURATION_MS = Number(process.env.PARKLOCK_CHAOS_PROCESS_MS) || 4_000;
const SEED = process.env.PARKLOCK_CHAOS_SEED ? Number(process.env.PARKLOCK_CHAOS_SEED) >>> 0 : Math.floor(Math.random() * 2 ** 32);
// How long processes may take to start, or to finish the round in hand once told to: on a loaded
// machine, behind many others.
const FINISH_LIMIT_MS = 3 * HANG_LIMIT_MS;
const TEST_TIMEOUT_MS = DURATION_MS + 20 * HANG_LIMIT_MS;
let directory;
let serial = 0;
const children = new Set();

// A fresh region for a storm, with the test's own ledger (process 0 of the journal).
function region(name) {
  const file = path.join(directory, `${name}-${++serial}`);
  const memory = sharedMemory(file, { size: LAYOUT.BYTES });
  return { file, memory, ledger: new Ledger(memory, 0), next: 1, tasks: new Map() };
}

// Forks process `index` of the region's journal, doing `task` (for at least `rounds` rounds).
function launch(where, task, seed, rounds = 0) {
  const index = where.next++;
  assert.ok(index < LAYOUT.MOST_PROCESSES, 'room in the journal for every process');
  where.tasks.set(index, task);
  const child = fork(AGENT, [where.file, task, String(index), String(seedOf(seed, index)), String(rounds)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.add(child);
  const entry = { index, task, child, ready: false, killed: false };
  entry.exit = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  entry.started = messageFrom(child, (m) => m === 'ready').then(() => {
    entry.ready = true;
  });
  return entry;
}

// Waits for processes to finish on their own, `help` running meanwhile (until its argument says
// they all have): each must exit with code 0, its journal FINISHED.
async function finished(where, entries, what, help = async () => {}) {
  let over = false;
  const helping = help(() => over);
  try {
    await withinLimit(Promise.all(entries.map((entry) => entry.exit)), what, FINISH_LIMIT_MS);
  } catch (error) {
    const window = where.leftByAKillBetweenStores?.();
    if (window !== undefined) {
      for (const entry of entries) entry.child.kill('SIGKILL');
      throw new DocumentedWindow(`${window}; ${stuckState(where)}`);
    }
    error.message += `\n${stuckState(where)}`;
    throw error;
  } finally {
    over = true;
    await helping;
  }
  for (const entry of entries) {
    assert.deepEqual(await entry.exit, { code: 0, signal: null }, `process ${entry.index} (${entry.task}) exits on its own`);
    assert.equal(where.ledger.of(entry.index).get('FINISHED'), 1, `process ${entry.index} finished`);
  }
}

// A storm stuck on what the README documents as unrecoverable (the header above): not a failure.
class DocumentedWindow extends Error {}

// Whether an RWLock's words are what a process killed between its two stores leaves: a write or
// upgradable hold, or a drain, that names nobody. A description of it, or undefined.
function rwlockOrphaned(where) {
  const { STATE_INDEX, OWNER_INDEX, WRITER, UPGRADABLE, DRAINING } = RWLOCK_LAYOUT;
  const words = new Int32Array(where.memory.buffer, LAYOUT.PRIMITIVE, 2);
  const state = Atomics.load(words, STATE_INDEX);
  if (Atomics.load(words, OWNER_INDEX) !== 0 || (state & (WRITER | UPGRADABLE | DRAINING)) === 0) return undefined;
  return `a process was killed between the two stores of an RWLock acquisition or drain (state ${state}, owner 0): the lock names nobody to report`;
}

// What a hang leaves to read: the primitive's words, the shared words and every journal that is
// not idle, finished or killed before the end (the processes still running, and the killed ones
// whose phase may explain them).
function stuckState(where) {
  const primitive = Array.from(new Int32Array(where.memory.buffer, LAYOUT.PRIMITIVE, 2));
  const words = Object.fromEntries(Object.keys(WORD).map((name) => [name, where.ledger.get(name)]));
  const busy = journals(where).filter((journal) => journal.index > 0 && (journal.PHASE !== PHASE.IDLE || journal.GATE !== 0 || !journal.FINISHED));
  return `stuck state: primitive words ${JSON.stringify(primitive)}, shared words ${JSON.stringify(words)}, journals ${JSON.stringify(busy)}`;
}

// A storm: a process per task, and until DURATION_MS has passed (or the journal is nearly full),
// every 20 to 250 ms a random ready one (that `killable` lets go) is killed with SIGKILL and, once
// it has exited, noted KILLED in its journal, passed to `onKilled` and replaced by a fresh one with
// the same task. Then `stop` (STOP by default) ends it, and every survivor must finish (`help`
// running meanwhile). Returns the killed and the surviving entries.
async function storm(where, seed, { tasks, killable = () => true, onKilled = () => {}, stop, help }) {
  const rng = random(seed);
  const live = new Map();
  const unexpected = [];
  let stopping = false;
  const start = (task) => {
    const entry = launch(where, task, seed);
    live.set(entry.index, entry);
    entry.exit.then(({ code, signal }) => {
      if (!entry.killed && !stopping) unexpected.push(`process ${entry.index} (${entry.task}) exited: ${code ?? signal}`);
    });
    return entry;
  };
  const first = tasks.map(start);
  await withinLimit(Promise.all(first.map((entry) => entry.started)), 'the first processes to open the region', FINISH_LIMIT_MS);
  const killed = [];
  const until = Date.now() + DURATION_MS;
  while (Date.now() < until && where.next < LAYOUT.MOST_PROCESSES - 16 && unexpected.length === 0) {
    await tick(20 + rng() * 230);
    const ready = [...live.values()].filter((entry) => entry.ready);
    const victim = ready[Math.floor(rng() * ready.length)];
    if (victim === undefined || !killable(victim)) continue;
    victim.killed = true;
    victim.child.kill('SIGKILL');
    await withinLimit(victim.exit, 'a killed process to exit');
    where.ledger.of(victim.index).set('KILLED', 1);
    live.delete(victim.index);
    killed.push(victim);
    await onKilled(victim);
    start(victim.task);
  }
  assert.deepEqual(unexpected, [], 'no process ends on its own during the storm');
  stopping = true;
  const survivors = [...live.values()];
  await (stop ? stop(survivors) : where.ledger.set('STOP', 1));
  await finished(where, survivors, 'every surviving process to finish', help);
  assert.ok(killed.length > 0, 'the storm killed processes');
  return { killed, survivors };
}

// Fresh processes, one per task, doing it for `rounds` rounds each after the storm.
async function fresh(where, seed, tasks, rounds, help) {
  const entries = tasks.map((task) => launch(where, task, seed, rounds));
  await finished(where, entries, `fresh processes (${tasks}) to use it again`, help);
}

// Every journal of the region: { index, PID, PHASE, ... }.
function journals(where) {
  return Array.from({ length: where.next }, (_, index) => {
    const journal = { index };
    for (const name of Object.keys(FIELD)) journal[name] = where.ledger.of(index).get(name);
    return journal;
  });
}

const sum = (list, name) => list.reduce((total, journal) => total + journal[name], 0);
const killedIn = (list, ...phases) => list.filter((journal) => journal.KILLED && phases.includes(journal.PHASE));

function assertNoWrongs(where) {
  const wrongs = journals(where)
    .filter((journal) => journal.WRONGS > 0)
    .map((journal) => `process ${journal.index}: ${WRONG_TEXT[journal.WRONG]} (${journal.WRONGS} times)`);
  assert.deepEqual(wrongs, [], 'no process saw an invariant broken');
}

// Nobody's lock was taken over, nor its mark found, unless it was killed.
function assertOnlyKilledTakenOver(list) {
  for (const journal of list) {
    if (journal.TAKEN_OVER || journal.STALE) assert.equal(journal.KILLED, 1, `process ${journal.index} taken over was killed`);
  }
}

// Takes a lock with a timed try, so that a lock a live process kept fails the test rather than
// hanging it: null if it was free, or the OwnerDiedError of its killed holder.
function takeOver(take) {
  try {
    assert.equal(take(), true, 'the lock is free, or its holder was killed');
    return null;
  } catch (error) {
    if (error.code !== 'ERR_PARKLOCK_OWNER_DIED') throw error;
    return error;
  }
}

// The counter that countOnce() increments holds exactly the increments journaled, once the test
// holds the lock and has settled a killed holder's.
function assertCounted(where) {
  const list = journals(where);
  for (const journal of list) assert.equal(journal.ENTERED, journal.DONE, `process ${journal.index}'s increment is settled`);
  assert.equal(where.ledger.get('COUNTER'), sum(list, 'DONE'), 'the counter holds every increment journaled');
}

// A test whose failure names the seed to run it again with; its own seed comes from its name.
function chaos(name, body) {
  it(name, { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const seed = seedOf(SEED, [...name].reduce((hash, c) => Math.imul(hash, 31) + c.charCodeAt(0), 0));
    try {
      await body(t, seed);
    } catch (error) {
      if (error instanceof DocumentedWindow) {
        t.skip(`${error.message} (PARKLOCK_CHAOS_SEED=${SEED})`);
        return;
      }
      error.message += `\n(PARKLOCK_CHAOS_SEED=${SEED} PARKLOCK_CHAOS_PROCESS_MS=${DURATION_MS})`;
      throw error;
    }
  });
}

describe('chaos across processes', { skip: !native.regionsSupported && 'no regions on this platform' }, () => {
  before(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'parklock-chaos-'));
  });
  after(() => removeTemporary(directory));
  // A failed test may leave processes running.
  afterEach(() => {
    for (const child of children) child.kill('SIGKILL');
  });

  chaos('Mutex: the count stays exact, a killed holder is told to the next one, which repairs', async (t, seed) => {
    const where = region('mutex');
    const { ledger } = where;
    const mutex = new Mutex(where.memory, LAYOUT.PRIMITIVE);
    const { killed } = await storm(where, seed, { tasks: Array(CHILDREN).fill('mutex') });
    const died = takeOver(() => mutex.tryLock(HANG_LIMIT_MS));
    claimMark(ledger, 'HOLDER', died, { repair: (dead) => settleCount(ledger, dead) });
    assertNoWrongs(where);
    assertCounted(where);
    const list = journals(where);
    assertOnlyKilledTakenOver(list);
    for (const journal of killedIn(list, PHASE.HOLDING)) {
      assert.equal(journal.TAKEN_OVER, 1, `process ${journal.index}, killed holding the lock, was told to the next holder`);
    }
    assert.ok(ledger.get('COUNTER') > 0);
    giveMarkBack(ledger, 'HOLDER');
    mutex.unlock();
    assert.equal(mutex.isLocked, false);
    t.diagnostic(`${killed.length} killed, ${ledger.get('COUNTER')} increments, ${killedIn(list, PHASE.HOLDING).length} killed inside`);

    await fresh(where, seed, ['mutex', 'mutex'], 300);
    assertNoWrongs(where);
    assertCounted(where);
    assert.equal(mutex.isLocked, false);
  });

  // The Condition's queue: each position below TAIL holds an item of a producer (its index *
  // 65536 + its count) and was taken exactly once, but where a consumer was killed taking it (0 or
  // once); each producer's items are its counts 0, 1, ... up to what it journaled (one more if it
  // was killed putting one); every item journaled as taken was.
  function assertItems(where) {
    const { ledger, tasks } = where;
    const list = journals(where);
    const tail = ledger.get('TAIL');
    assert.equal(ledger.get('HEAD'), tail, 'every item was taken');
    const maybe = new Set(list.filter((j) => j.KILLED && j.ARG !== 0).map((j) => j.ARG - 1));
    const counts = new Map();
    let consumed = 0;
    for (let position = 0; position < LAYOUT.TABLE_LENGTH; position++) {
      const times = Atomics.load(ledger.table(TABLE.CONSUMED), position);
      consumed += times;
      if (position >= tail) {
        assert.equal(times, 0, `position ${position}, past the tail, taken`);
        continue;
      }
      if (maybe.has(position)) assert.ok(times <= 1, `position ${position} taken ${times} times`);
      else assert.equal(times, 1, `item at position ${position} taken once`);
      const item = Atomics.load(ledger.table(TABLE.ITEMS), position);
      const producer = Math.floor(item / 65536);
      assert.equal(tasks.get(producer), 'produce', `position ${position} holds an item of a producer`);
      if (!counts.has(producer)) counts.set(producer, []);
      counts.get(producer).push(item % 65536);
    }
    for (const journal of list.filter((j) => tasks.get(j.index) === 'produce')) {
      const mine = (counts.get(journal.index) ?? []).sort((a, b) => a - b);
      const putting = journal.KILLED && journal.PHASE === PHASE.PUTTING ? 1 : 0;
      assert.ok(
        mine.length === journal.PRODUCED || mine.length === journal.PRODUCED + putting,
        `producer ${journal.index} put ${mine.length} items, journaled ${journal.PRODUCED}`,
      );
      mine.forEach((count, i) => assert.equal(count, i, `producer ${journal.index}'s items are its counts, each once`));
    }
    const taken = sum(list, 'TAKEN');
    assert.ok(consumed >= taken && consumed <= taken + maybe.size, `${consumed} taken, ${taken} journaled, ${maybe.size} uncertain`);
    return tail;
  }

  chaos('Condition: every item passes once from producers to consumers, none left behind by a lost wake-up', async (t, seed) => {
    const where = region('condition');
    const { ledger } = where;
    const mutex = new Mutex(where.memory, LAYOUT.MUTEX);
    const condition = new Condition(where.memory, LAYOUT.PRIMITIVE);
    const { killed } = await storm(where, seed, {
      tasks: ['produce', 'produce', 'consume', 'consume', 'consume'],
      stop: async (survivors) => {
        // Consumers wait without timeouts now, and producers hand them a last few items, each once
        // the one before was taken, then exit: a lost wake-up leaves an item untaken, and a
        // producer waiting.
        ledger.set('DRAIN', 1);
        await finished(where, survivors.filter((entry) => entry.task === 'produce'), 'the producers to hand off their last items');
        await waitFor(() => ledger.get('HEAD') === ledger.get('TAIL'), 'the consumers to take every item', FINISH_LIMIT_MS);
        claimMark(ledger, 'HOLDER', takeOver(() => mutex.tryLock(HANG_LIMIT_MS)));
        ledger.set('STOP', 1);
        condition.notifyAll();
        giveMarkBack(ledger, 'HOLDER');
        mutex.unlock();
      },
    });
    assert.equal(takeOver(() => mutex.tryLock(0)), null, 'the mutex is free');
    mutex.unlock();
    assertNoWrongs(where);
    assertOnlyKilledTakenOver(journals(where));
    const items = assertItems(where);
    assert.ok(items > 0);
    t.diagnostic(`${killed.length} killed, ${items} items`);

    // A fresh consumer waits for a fresh producer's items.
    await fresh(where, seed, ['consume', 'produce'], 200);
    assertNoWrongs(where);
    assert.equal(assertItems(where), items + 200);
  });
  chaos('Semaphore: never more permits lent than it has; those killed holders kept stay taken, the others come back', async (t, seed) => {
    const PERMITS = 3;
    const where = region('semaphore');
    const { ledger } = where;
    const semaphore = Semaphore.init(where.memory, LAYOUT.PRIMITIVE, PERMITS);
    ledger.set('CAPACITY', PERMITS);
    // A killed holder's permits stay taken (docs/worker-death.md): the test gives them back, so
    // that the storm goes on. A process killed asking for permits, or giving them back, may or may
    // not have them: those are given back once the storm ends, so that no survivor waits for ever.
    let uncertain = 0;
    const giveBack = (permits) => {
      ledger.add('CAPACITY', permits);
      semaphore.release(permits);
    };
    const { killed } = await storm(where, seed, {
      tasks: Array(CHILDREN).fill('semaphore'),
      onKilled: ({ index }) => {
        const phase = ledger.of(index).get('PHASE');
        const permits = ledger.of(index).get('ARG');
        if (phase === PHASE.HELD) giveBack(permits);
        else if (phase === PHASE.ACQUIRING || phase === PHASE.RELEASING) uncertain += permits;
      },
      stop: () => {
        ledger.set('STOP', 1);
        if (uncertain > 0) giveBack(uncertain);
      },
    });
    assertNoWrongs(where);
    // The permits missing are exactly those kept by killed holders: the test gave back those of
    // the processes killed holding them and, at the end, as many as the uncertain ones asked for,
    // of which each kept its permits or none.
    const missing = ledger.get('CAPACITY') - semaphore.available;
    const kept = sum(killedIn(journals(where), PHASE.HELD), 'ARG');
    assert.ok(missing >= kept && missing <= kept + uncertain, `${missing} permits missing, ${kept} kept, ${uncertain} uncertain`);
    // INSIDE counts the permits of killed holders that had counted theirs.
    const inside = ledger.get('INSIDE');
    assert.ok(inside >= 0 && inside <= kept, `${inside} permits counted inside`);
    t.diagnostic(`${killed.length} killed, ${kept} permits kept by killed holders, ${uncertain} uncertain, ${missing} missing`);

    await fresh(where, seed, ['semaphore', 'semaphore'], 300);
    assertNoWrongs(where);
    assert.equal(ledger.get('CAPACITY') - semaphore.available, missing, 'fresh processes give back every permit they take');
    assert.equal(ledger.get('INSIDE'), inside);
  });

  chaos('RWLock: a writer is alone and the count exact, a killed writer is taken over, readers only ever beside readers', async (t, seed) => {
    const where = region('rwlock');
    where.leftByAKillBetweenStores = () => rwlockOrphaned(where);
    const { ledger } = where;
    const rwlock = new RWLock(where.memory, LAYOUT.PRIMITIVE);
    const settle = (dead) => settleCount(ledger, dead);
    const { killed } = await storm(where, seed, {
      tasks: Array(CHILDREN).fill('rwlock'),
      // Never a process that asks for or holds a plain read lock (GATE).
      killable: ({ index }) => ledger.of(index).cas('GATE', 0, 2) === 0,
    });
    // The write lock: free, or its killed writer's, with the report.
    const died = takeOver(() => rwlock.tryLock(HANG_LIMIT_MS));
    await settleMark(ledger, 'HOLDER', died, { repair: settle, exclusive: true });
    await settleMark(ledger, 'UPGRADER', null, { exclusive: true });
    claimMark(ledger, 'HOLDER', null);
    assert.equal(ledger.get('READERS'), 0, 'no reader was left inside');
    assertNoWrongs(where);
    assertCounted(where);
    const list = journals(where);
    assertOnlyKilledTakenOver(list);
    for (const journal of killedIn(list, PHASE.HOLDING, PHASE.UPGRADED)) {
      assert.ok(journal.TAKEN_OVER || journal.STALE, `process ${journal.index}, killed writing, was taken over`);
    }
    // A killed writer's report is lost only with an upgradable holder told of it and killed before
    // it noted so (readers are not killed, and a writer killed so is reported in turn).
    const lost = list.filter((journal) => journal.STALE && !journal.TAKEN_OVER && journal.PHASE !== PHASE.UPGRADABLE).length;
    assert.ok(lost <= killedIn(list, PHASE.UPGRADABLE).length, `${lost} writers' deaths told to nobody`);
    giveMarkBack(ledger, 'HOLDER');
    rwlock.unlock();
    assert.equal(rwlock.isLocked, false);
    t.diagnostic(`${killed.length} killed, ${ledger.get('COUNTER')} writes, ${killedIn(list, PHASE.HOLDING, PHASE.UPGRADED).length} killed writing, ${lost} told to nobody`);

    await fresh(where, seed, ['rwlock', 'rwlock'], 200);
    assertNoWrongs(where);
    assertCounted(where);
    assert.equal(rwlock.isLocked, false);
  });

  chaos('Latch: nobody passes one before it opens, and every count-down journaled is in its count', async (t, seed) => {
    const COUNT = 3;
    const where = region('latch');
    const { ledger } = where;
    const latchAt = (g) => new Latch(where.memory, entryOffset(TABLE.LATCHES, g));
    for (let g = 0; g < LAYOUT.TABLE_LENGTH; g++) Latch.init(where.memory, entryOffset(TABLE.LATCHES, g), COUNT);
    // Counts down what `latch g` lacks, journaled as the test's.
    const open = (g) => {
      while (latchAt(g).count > 0) {
        try {
          latchAt(g).countDown();
        } catch (error) {
          // A process counted it down to 0 since.
          if (error.code !== 'ERR_OUT_OF_RANGE') throw error;
          continue;
        }
        Atomics.add(ledger.table(TABLE.DOWNS), g, 1);
      }
    };
    const { killed } = await storm(where, seed, {
      tasks: Array(CHILDREN).fill('latch'),
      // Survivors may wait on a latch whose other count-downs were to come from killed processes.
      help: async (over) => {
        while (!over()) {
          for (const journal of journals(where)) {
            if (journal.FINISHED === 0 && journal.KILLED === 0 && journal.PHASE === PHASE.WAITING) open(journal.ARG - 1);
          }
          await tick(10);
        }
      },
    });
    assertNoWrongs(where);
    // Each latch's count is what it started with less the count-downs journaled, and less one for
    // each process killed counting it down (which may or may not have).
    const list = journals(where);
    const maybes = new Map();
    for (const { ARG } of killedIn(list, PHASE.COUNTING_DOWN)) maybes.set(ARG - 1, (maybes.get(ARG - 1) ?? 0) + 1);
    let last = -1;
    for (let g = 0; g < LAYOUT.TABLE_LENGTH; g++) {
      const downs = Atomics.load(ledger.table(TABLE.DOWNS), g);
      const maybe = maybes.get(g) ?? 0;
      const missing = COUNT - latchAt(g).count - downs;
      assert.ok(missing >= 0 && missing <= maybe, `latch ${g}: ${downs} count-downs journaled, count ${latchAt(g).count}`);
      if (latchAt(g).count < COUNT) last = g;
    }
    // A process goes on to a latch only once the one before is open.
    for (let g = 0; g < last; g++) assert.equal(latchAt(g).count, 0, `latch ${g}, before latch ${last}, is open`);
    assert.ok(last > 0);
    t.diagnostic(`${killed.length} killed, ${last + 1} latches, ${sum(list, 'PASSES')} passed`);

    // Fresh processes count down and pass the latches after it.
    open(last);
    await fresh(where, seed, Array(COUNT).fill('latch'), 2);
    assertNoWrongs(where);
    for (let g = last + 1; g < last + 3; g++) assert.equal(latchAt(g).count, 0);
    assert.equal(latchAt(last + 3).count, COUNT);
  });

  chaos('Barrier: nobody passes before the generation it joined completes, one leader and every party each', async (t, seed) => {
    const PARTIES = 3;
    const where = region('barrier');
    const { ledger } = where;
    const barrier = Barrier.init(where.memory, LAYOUT.PRIMITIVE, PARTIES);
    // Arrives as all the parties but one, beside processes that wait for parties killed since or
    // finished, withdrawing when nobody comes.
    const arrive = async (over) => {
      while (!over()) {
        try {
          const leader = await barrier.waitAsync({ timeout: 20 });
          if (leader) ledger.mine.add('LEADS');
          ledger.mine.add('PASSES');
        } catch (error) {
          if (error.code !== 'ERR_PARKLOCK_TIMEOUT') throw error;
        }
      }
    };
    const help = (over) => Promise.all(Array.from({ length: PARTIES - 1 }, () => arrive(over)));
    // The arrivals the barrier counted (every generation's parties, and those of the current one)
    // are the passes journaled and those of processes killed arriving (counted or not); each
    // generation had one leader, journaled unless it was killed as it passed.
    // The barrier counts generations modulo 2^16: it completed as many more times 2^16 as the
    // passes journaled say (those not journaled are far fewer).
    const assertGenerations = () => {
      const state = Atomics.load(new Int32Array(where.memory.buffer, LAYOUT.PRIMITIVE, 1), 0);
      const waiting = state & 0xffff;
      const list = journals(where);
      const passes = sum(list, 'PASSES');
      const generations = (state >>> 16) + 65536 * Math.round((passes / PARTIES - (state >>> 16)) / 65536);
      const uncertain = killedIn(list, PHASE.WAITING).length;
      const unjournaled = PARTIES * generations + waiting - passes;
      assert.ok(unjournaled >= 0 && unjournaled <= uncertain, `${unjournaled} arrivals not journaled, ${uncertain} killed arriving`);
      const leaders = generations - sum(list, 'LEADS');
      assert.ok(leaders >= 0 && leaders <= unjournaled, `${leaders} leaders not journaled`);
      assert.ok(waiting <= uncertain, `${waiting} arrivals left waiting`);
      return generations;
    };
    const { killed } = await storm(where, seed, { tasks: Array(CHILDREN).fill('barrier'), help });
    assertNoWrongs(where);
    const generations = assertGenerations();
    assert.ok(generations > 0);
    t.diagnostic(`${killed.length} killed, ${generations} generations`);

    await fresh(where, seed, Array(PARTIES).fill('barrier'), 20, help);
    assertNoWrongs(where);
    assert.ok(assertGenerations() >= generations + 20);
  });

  chaos('Once: each initializer\'s effect happens once, or again only after its runner\'s death was told', async (t, seed) => {
    const where = region('once');
    const { ledger } = where;
    const onceAt = (g) => new Once(where.memory, entryOffset(TABLE.ONCES, g));
    const { killed } = await storm(where, seed, { tasks: Array(CHILDREN).fill('once') });
    // The onces called (a process goes on to the next once only when one is done); those whose
    // runner was killed with nobody waiting, this process runs.
    const touched = Math.max(...journals(where).map((journal) => journal.ARG));
    const runHere = (g) =>
      onceAt(g).run((previousRunDied) => {
        startRun(ledger, g, previousRunDied);
        Atomics.add(ledger.table(TABLE.EFFECTS), g, 1);
      });
    for (let g = 0; g < touched; g++) runHere(g);
    assertNoWrongs(where);
    const list = journals(where);
    const assertOnce = (g) => {
      const about = list.filter((journal) => journal.KILLED && journal.ARG === g + 1);
      const killedIn = (phase) => about.filter((journal) => journal.PHASE === phase).length;
      const [calling, running, ran] = [killedIn(PHASE.CALLING), killedIn(PHASE.RUNNING), killedIn(PHASE.RAN)];
      const runs = Atomics.load(ledger.table(TABLE.RUNS), g);
      const starts = runs % RUN_TOLD;
      const told = Math.floor(runs / RUN_TOLD);
      const effects = Atomics.load(ledger.table(TABLE.EFFECTS), g);
      const what = `once ${g}: ${starts} runs, ${told} told, ${effects} effects; killed ${calling} calling, ${running} running, ${ran} after`;
      assert.equal(onceAt(g).done, true, what);
      // Every run but the first is told of the death before it (the first too may be unjournaled:
      // its process was killed calling).
      assert.ok(starts - told === 1 || (starts === told && calling > 0), what);
      // One run for each runner killed in its initializer, one more that completed, and runs again
      // only after deaths.
      assert.ok(starts >= 1 + running && starts <= 1 + running + ran + calling, what);
      // The effect once, and again only where a runner was killed after it.
      assert.ok(effects >= 1 && effects <= 1 + running + ran, what);
    };
    for (let g = 0; g < touched; g++) assertOnce(g);
    assert.equal(Atomics.load(ledger.table(TABLE.RUNS), touched), 0);
    assert.ok(touched > 0);
    const deaths = list.filter((journal) => journal.KILLED && [PHASE.RUNNING, PHASE.RAN].includes(journal.PHASE)).length;
    t.diagnostic(`${killed.length} killed, ${touched} onces, ${deaths} killed in an initializer`);

    await fresh(where, seed, ['once', 'once'], 20);
    assertNoWrongs(where);
    for (let g = touched; g < touched + 20; g++) {
      assert.equal(Atomics.load(ledger.table(TABLE.RUNS), g), 1);
      assert.equal(Atomics.load(ledger.table(TABLE.EFFECTS), g), 1);
    }
  });
});
