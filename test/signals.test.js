'use strict';
// options.signal, for every Promise-returning method: what counts as a signal, and that the
// signal's own code (getters, addEventListener, removeEventListener) can never leave a wait
// queued in the addon, a lock taken for nobody, or a Promise that never settles.
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { pendingCount } = require('../lib/async_waits');
const { withinLimit, exitIfKeptAlive } = require('./helpers');
const { WAIT_CASES } = require('./wait_cases');

exitIfKeptAlive();

// An object that behaves as an AbortSignal; `overrides` replace any of its members. setAborted()
// changes what `aborted` and `reason` report; abort() also dispatches the event.
function signalLike(overrides = {}) {
  const target = new EventTarget();
  const state = { aborted: false, reason: undefined };
  const signal = {
    get aborted() {
      return state.aborted;
    },
    get reason() {
      return state.reason;
    },
    addEventListener: (...args) => target.addEventListener(...args),
    removeEventListener: (...args) => target.removeEventListener(...args),
    setAborted(reason) {
      state.aborted = true;
      state.reason = reason;
    },
    abort(reason) {
      signal.setAborted(reason);
      target.dispatchEvent(new Event('abort'));
    },
  };
  return Object.defineProperties(signal, Object.getOwnPropertyDescriptors(overrides));
}

const INVALID = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' };

// The wait rejected before anything was queued: nothing is, and once what it waited for becomes
// available, nobody takes it.
async function assertNothingHappened(ctx) {
  assert.equal(ctx.queued(), 0, 'nothing is queued in the addon');
  assert.equal(pendingCount(), 0, 'no asynchronous wait is pending');
  await ctx.release();
  ctx.assertUntaken();
}

for (const waitCase of WAIT_CASES) {
  describe(waitCase.name, () => {
    it('accepts an object that behaves as an AbortSignal, and aborting it cancels the wait', async () => {
      const ctx = waitCase.setup();
      const signal = signalLike();
      const waiting = ctx.wait({ signal });
      const reason = new Error('stop');
      signal.abort(reason);
      await assert.rejects(withinLimit(waiting, 'the aborted wait'), (error) => error === reason);
      await assertNothingHappened(ctx);
    });

    it('rejects (never throws) signals that lack a member or whose aborted is not a boolean', async () => {
      const { removeEventListener, ...noRemove } = signalLike();
      const { reason, ...noReason } = signalLike();
      const bad = [
        noRemove,
        noReason,
        signalLike({ aborted: 0 }),
        signalLike({ aborted: 'false' }),
        signalLike({ addEventListener: 'yes' }),
        signalLike({ removeEventListener: null }),
      ];
      for (const signal of bad) {
        const ctx = waitCase.setup();
        await assert.rejects(withinLimit(ctx.wait({ signal }), 'the wait'), INVALID);
        await assertNothingHappened(ctx);
      }
    });

    it('a throwing addEventListener rejects the wait with its error, and nothing stays queued or taken', async () => {
      const ctx = waitCase.setup();
      const failure = new Error('addEventListener failed');
      const signal = signalLike({
        addEventListener() {
          throw failure;
        },
      });
      await assert.rejects(withinLimit(ctx.wait({ signal }), 'the wait'), (error) => error === failure);
      await assertNothingHappened(ctx);
    });

    it('a throwing aborted getter rejects the wait with its error, and nothing is queued', async () => {
      const ctx = waitCase.setup();
      const failure = new Error('aborted failed');
      let reads = 0;
      // Valid when validated; throws at the read that decides whether to wait.
      const signal = signalLike({
        get aborted() {
          reads += 1;
          if (reads > 1) throw failure;
          return false;
        },
      });
      await assert.rejects(withinLimit(ctx.wait({ signal }), 'the wait'), (error) => error === failure);
      await assertNothingHappened(ctx);
    });

    it('a listener called at once by addEventListener cancels the wait before it is queued', async () => {
      const ctx = waitCase.setup();
      const reason = new Error('aborted while subscribing');
      const signal = signalLike({
        addEventListener(type, listener) {
          signal.setAborted(reason);
          listener();
        },
      });
      await assert.rejects(withinLimit(ctx.wait({ signal }), 'the wait'), (error) => error === reason);
      await assertNothingHappened(ctx);
    });

    it('a throwing reason getter at abort rejects the wait with its error, leaving nothing queued', async () => {
      const ctx = waitCase.setup();
      const failure = new Error('reason failed');
      const signal = signalLike({
        get reason() {
          if (signal.aborted) throw failure;
          return undefined;
        },
      });
      const waiting = ctx.wait({ signal });
      signal.abort();
      await assert.rejects(withinLimit(waiting, 'the aborted wait'), (error) => error === failure);
      await assertNothingHappened(ctx);
    });

    it('a throwing removeEventListener does not stop the wait from settling normally', async () => {
      const ctx = waitCase.setup();
      const signal = signalLike({
        removeEventListener() {
          throw new Error('removeEventListener failed');
        },
      });
      const waiting = ctx.wait({ signal });
      await ctx.release();
      ctx.finish(await withinLimit(waiting, 'the released wait'));
      assert.equal(ctx.queued(), 0);
      assert.equal(pendingCount(), 0);
    });
  });
}
