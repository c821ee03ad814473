'use strict';
// Mutex across several threads: exact shared counters, termination of waiting workers, event-loop
// liveness (what keeps a thread alive and what does not), and a stress test for lost wake-ups.
const { describe, it, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const { Mutex } = require('../lib');
const { threadId } = require('../lib/async_waits');
const { layouts } = require('../lib');
const {
  HANG_LIMIT_MS,
  fixture,
  loadWord,
  queued,
  assertClean,
  tick,
  waitFor,
  withinLimit,
  isSettled,
  testSignal,
  abortTestWaits,
  exitIfKeptAlive,
  runWorkers,
  agentsPerTest,
} = require('./helpers');

const { LOCKED, LOCKED_PARKED, OWNER_SHIFT } = layouts.mutex;

exitIfKeptAlive();

const startAgent = agentsPerTest(fixture('agent.js'), (...mutexes) => ({ mutexes }));
// Contended waits on this thread pass `signal: testSignal()`, so that a wait a bug leaves pending
// is cancelled after its test (instead of keeping the test process alive).
afterEach(abortTestWaits);

describe('shared counters', () => {
  it('4 workers with lock() and the main thread with lockAsync() count exactly', { timeout: 60_000 }, async () => {
    const mutex = new Mutex();
    const memory = new SharedArrayBuffer(4);
    const counter = new Int32Array(memory);
    const WORKERS = 4;
    const ITERATIONS = 20_000;
    const MAIN_ITERATIONS = 2_000;

    const workers = runWorkers(
      fixture('counter_sync.js'),
      Array.from({ length: WORKERS }, () => ({ mutex, counter: memory, iterations: ITERATIONS })),
    );
    let mainFailure;
    const main = (async () => {
      for (let i = 0; i < MAIN_ITERATIONS; i++) {
        const guard = await mutex.lockAsync({ signal: testSignal() });
        if (!mutex.isHeldByCurrentThread) throw new Error('lockAsync resolved without the mutex');
        counter[0] = counter[0] + 1;
        guard.unlock();
      }
    })().catch((error) => {
      mainFailure = error;
    });
    await Promise.all([workers, withinLimit(main, 'main thread increments', 30_000)]);
    if (mainFailure) throw mainFailure;
    assert.equal(counter[0], WORKERS * ITERATIONS + MAIN_ITERATIONS);
    assertClean(mutex);
  });

  it('workers using only lockAsync/executeLocked count exactly, on each of 20 runs', { timeout: 60_000 }, async () => {
    const WORKERS = 3;
    const ITERATIONS = 150;
    for (let run = 0; run < 20; run++) {
      const mutex = new Mutex();
      const memory = new SharedArrayBuffer(4);
      await runWorkers(
        fixture('counter_async.js'),
        Array.from({ length: WORKERS }, () => ({ mutex, counter: memory, iterations: ITERATIONS })),
      );
      assert.equal(new Int32Array(memory)[0], WORKERS * ITERATIONS, `run ${run}`);
      assertClean(mutex);
    }
  });

  it('timed-out and aborted async waits racing with unlocks never lose a wake-up', { timeout: 60_000 }, async (t) => {
    const mutex = new Mutex();
    const memory = new SharedArrayBuffer(4);
    const counter = new Int32Array(memory);
    const WORKERS = 4;
    const workers = runWorkers(
      fixture('race.js'),
      Array.from({ length: WORKERS }, (_, i) => ({
        mutex,
        counter: memory,
        iterations: 2_500,
        seed: 0x9e3779b9 * (i + 1),
      })),
    );
    // The main thread joins in with tiny-timeout asynchronous waits.
    let mainAcquired = 0;
    let mainTimedOut = 0;
    const main = (async () => {
      for (let i = 0; i < 300; i++) {
        let guard;
        try {
          guard = await mutex.lockAsync({ timeout: i % 3 === 0 ? 0 : 1 });
        } catch (error) {
          if (error.code !== 'ERR_PARKLOCK_TIMEOUT') throw error;
          mainTimedOut++;
          continue;
        }
        mainAcquired++;
        counter[0] = counter[0] + 1;
        guard.unlock();
      }
    })();
    const [results] = await Promise.all([workers, withinLimit(main, 'main thread waits', 30_000)]);
    const total = { acquired: mainAcquired, timedOut: mainTimedOut, aborted: 0, tryLockFailed: 0, lock: 0 };
    for (const { stats } of results) {
      for (const key of Object.keys(total)) total[key] += stats[key];
    }
    t.diagnostic(`race: ${JSON.stringify(total)}`);
    assert.equal(counter[0], total.acquired, 'every acquisition was exclusive and counted once');
    assert.equal(queued(mutex), 0);
    assert.equal(loadWord(mutex), 0);
    assertClean(mutex);
  });
});

describe('terminating waiting workers', () => {
  for (const [label, op, args] of [
    ['lock()', 'lock', {}],
    ['tryLock(60000)', 'tryLock', { timeout: 60_000 }],
  ]) {
    it(`terminate() of a worker blocked in ${label} is prompt and leaves the lock usable`, { timeout: 30_000 }, async () => {
      const mutex = new Mutex();
      const agent = await startAgent(mutex);
      const holder = mutex.lock();
      const { started, reply } = agent.send(op, args);
      await withinLimit(started, 'worker starting to lock');
      await waitFor(() => queued(mutex) === 1, 'the worker to park');

      const start = performance.now();
      await withinLimit(agent.terminate(), 'terminate()');
      const elapsed = performance.now() - start;
      assert.ok(elapsed < 2000, `terminate() took ${elapsed} ms`);
      await assert.rejects(reply, /exited/, 'the blocked call never returned');

      assert.equal(queued(mutex), 0, 'the terminated waiter left the parking lot');
      assert.equal(
        loadWord(mutex),
        (threadId << OWNER_SHIFT) | LOCKED,
        'still held by this thread, and the last waiter out cleared the contended state',
      );
      holder.unlock();
      assertClean(mutex);

      // Usable by this thread and by another worker.
      assert.equal(mutex.tryLock(), true);
      mutex.unlock();
      const other = await startAgent(mutex);
      assert.equal(await other.call('tryLock'), true);
      await other.call('unlock');
      assertClean(mutex);
    });
  }

  it('terminate() of a worker blocked behind another worker frees nothing it did not hold', { timeout: 30_000 }, async () => {
    const mutex = new Mutex();
    const owner = await startAgent(mutex);
    const waiter = await startAgent(mutex);
    await owner.call('lock');
    await withinLimit(waiter.send('lock').started, 'worker starting to lock');
    await waitFor(() => queued(mutex) === 1, 'the worker to park');
    await withinLimit(waiter.terminate(), 'terminate()');
    assert.equal(queued(mutex), 0);
    assert.equal(loadWord(mutex) >>> OWNER_SHIFT, owner.threadId, 'the owner still holds it');
    await owner.call('unlock');
    assertClean(mutex);
  });

  it('terminate() of a worker with a pending lockAsync removes its waiter', { timeout: 30_000 }, async () => {
    const mutex = new Mutex();
    const agent = await startAgent(mutex);
    const holder = mutex.lock();
    await agent.call('startLockAsync', { key: 'a' });
    assert.equal(queued(mutex), 1);
    // A second waiter, on this thread, queued behind the worker's.
    const mine = mutex.lockAsync({ signal: testSignal() });
    assert.equal(queued(mutex), 2);

    await withinLimit(agent.terminate(), 'terminate()');
    assert.equal(queued(mutex), 1, "only this thread's waiter is left");
    holder.unlock();
    const guard = await withinLimit(mine, 'lockAsync after the other waiter left');
    guard.unlock();
    assertClean(mutex);
  });

  it('a lock handed to a pending lockAsync of a worker that is then terminated is passed on', { timeout: 30_000 }, async () => {
    // The worker's JavaScript is kept busy so the wake-up (the lock, handed over because its
    // waiter waited past the fairness bound) can never be delivered; terminating the worker must
    // pass the lock on to the next waiter instead of leaving it held by a dead thread.
    const mutex = new Mutex();
    const agent = await startAgent(mutex);
    const holder = mutex.lock();
    await agent.call('startLockAsync', { key: 'a' });
    await withinLimit(agent.send('spin').started, 'worker starting to spin');
    const mine = mutex.lockAsync({ signal: testSignal() });
    assert.equal(queued(mutex), 2);
    await tick(20); // well past the 1 ms fairness bound: the unlock hands over
    holder.unlock();
    await waitFor(() => queued(mutex) === 1, 'the worker to be woken');
    assert.equal(loadWord(mutex), (agent.threadId << OWNER_SHIFT) | LOCKED_PARKED, 'handed to the worker');
    assert.equal(await isSettled(mine), false);

    await withinLimit(agent.terminate(), 'terminate()');
    const guard = await withinLimit(mine, 'lockAsync after the worker was terminated');
    assert.equal(mutex.isHeldByCurrentThread, true);
    guard.unlock();
    assertClean(mutex);
  });

  it('a lock handed to a pending lockAsync of a worker that is then terminated is released when nobody else waits', { timeout: 30_000 }, async () => {
    const mutex = new Mutex();
    const agent = await startAgent(mutex);
    const holder = mutex.lock();
    await agent.call('startLockAsync', { key: 'a' });
    await withinLimit(agent.send('spin').started, 'worker starting to spin');
    await tick(20);
    holder.unlock();
    await waitFor(() => queued(mutex) === 0, 'the worker to be woken');
    assert.equal(loadWord(mutex), (agent.threadId << OWNER_SHIFT) | LOCKED, 'handed to the worker');
    await withinLimit(agent.terminate(), 'terminate()');
    await waitFor(() => loadWord(mutex) === 0, 'the handed-over lock to be released');
    assertClean(mutex);
  });
});

describe('a thread blocking on a mutex its own lockAsync waits for', () => {
  it('gets ERR_PARKLOCK_DEADLOCK when the lock is handed to that lockAsync, which then holds it', { timeout: 30_000 }, async () => {
    const mutex = new Mutex();
    const agent = await startAgent(mutex);
    const holder = mutex.lock();
    await agent.call('startLockAsync', { key: 'a' });
    const blocked = agent.send('tryLock', { timeout: HANG_LIMIT_MS });
    await withinLimit(blocked.started, 'the worker to block');
    await waitFor(() => queued(mutex) === 2, 'both waits of the worker to queue');
    // No wait past the fairness bound: a Promise wait whose thread is blocked on the same lock is
    // always handed the lock, never woken to compete (it could not run).
    holder.unlock();
    // The lock went to the worker's Promise wait, which cannot run while the worker is blocked;
    // the blocked call notices and throws instead of waiting forever.
    await assert.rejects(withinLimit(blocked.reply, 'the blocked tryLock'), { code: 'ERR_PARKLOCK_DEADLOCK' });
    assert.equal(await agent.call('settle', { key: 'a' }), 'acquired');
    assert.equal(await agent.call('isHeld'), true);
    await agent.call('unlock');
    assertClean(mutex);
  });
});

describe('event-loop liveness', () => {
  function runNode(args) {
    return new Promise((resolve) => {
      execFile(process.execPath, args, { timeout: 20_000 }, (error, stdout, stderr) => {
        resolve({ code: error ? error.code ?? error.signal : 0, killed: error?.killed, stdout, stderr });
      });
    });
  }

  it('the main thread awaiting a lock held by an unref()ed worker does not exit early', { timeout: 30_000 }, async () => {
    const { code, killed, stdout, stderr } = await runNode([fixture('child_process_main.js'), 'unref']);
    assert.equal(killed, undefined, `the child hung; stderr: ${stderr}`);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /PARKLOCK_ACQUIRED/, `the child exited before acquiring; stderr: ${stderr}`);
  });

  it('the main thread exits on its own once no wait is pending', { timeout: 30_000 }, async () => {
    const { code, killed, stdout, stderr } = await runNode([fixture('child_process_main.js'), 'idle']);
    assert.equal(killed, undefined, `the child did not exit on its own; stderr: ${stderr}`);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /PARKLOCK_IDLE ERR_PARKLOCK_TIMEOUT AbortError/);
  });

  it('a worker whose only work is a pending lockAsync stays alive until it acquires', { timeout: 30_000 }, async () => {
    const mutex = new Mutex();
    const holder = mutex.lock();
    let waiting = false;
    const worker = runWorkers(fixture('keep_alive.js'), [{ mutex }], {
      onMessage: (message) => {
        if (message.type === 'waiting') waiting = true;
      },
    });
    worker.catch(() => {});
    await waitFor(() => waiting && queued(mutex) === 1, 'the worker to queue');
    await tick(200); // time for a worker that was not kept alive to exit (and fail runWorkers)
    holder.unlock();
    await worker;
    assertClean(mutex);
  });

  it('a worker with no pending waits exits normally', { timeout: 30_000 }, async () => {
    const mutex = new Mutex();
    const holder = mutex.lock();
    // runWorkers resolves only once the worker has exited with code 0; a worker kept alive by the
    // addon would run into the hang limit.
    await runWorkers(fixture('exits_cleanly.js'), [{ mutex }], { limit: HANG_LIMIT_MS });
    assert.equal(queued(mutex), 0);
    assert.equal(mutex.isHeldByCurrentThread, true);
    holder.unlock();
    assertClean(mutex);
  });
});
