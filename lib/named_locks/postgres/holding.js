'use strict';
// A request's life on PostgreSQL: a session from the pool, the name's id, the advisory lock
// (waited for, tried, or stolen), the grant (token, dead holders, this holder's row), and the
// release. Every path that gives up with a session that may still hold the lock, or may still
// receive a cancel meant for its wait, closes the session instead of returning it to the pool:
// the server then ends whatever it held.
const { performance } = require('node:perf_hooks');
const { TimeoutError } = require('../../errors');
const { reasonOf } = require('../../signals');
const { Session } = require('./session');
const { cancelStatement } = require('./cancel');
const { serverError } = require('./postgres_errors');

const QUERY_CANCELED = '57014';
// How long a cancel may take before it is sent again.
const RECANCEL_MS = 500;
// The name -> id cache of a manager: ids never change, so only its size is bounded.
const MOST_CACHED_IDS = 65536;

// Rejects once `signal` aborts or `deadline` (performance.now() time) passes; `stopped` then says
// so; clear() stops it.
function stopper(signal, deadline) {
  const stop = { stopped: false, promise: null, clear: () => {} };
  stop.promise = new Promise((_, reject) => {
    const end = (reason) => {
      stop.stopped = true;
      reject(reason);
    };
    const onAbort = () => end(reasonOf(signal));
    const timer = deadline === Infinity ? null : setTimeout(() => end(new TimeoutError('The lock request timed out')), Math.max(0, deadline - performance.now()));
    signal?.addEventListener('abort', onAbort, { once: true });
    stop.clear = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
  });
  stop.promise.catch(() => {});
  return stop;
}

async function checkout(pool, stop) {
  const opening = Session.open(pool);
  try {
    return await Promise.race([opening, stop.promise]);
  } catch (error) {
    // A session that arrives after the request gave up goes straight back.
    opening.then((session) => session.close(false), () => {});
    throw error;
  }
}

async function nameId(ctx, session, name) {
  const cached = ctx.ids.get(name);
  if (cached !== undefined) return cached;
  for (;;) {
    const { rows } = await session.query({ name: ctx.prefix + 'name-id', text: ctx.statements.nameId, values: [name] });
    if (rows.length > 0) {
      if (ctx.ids.size >= MOST_CACHED_IDS) ctx.ids.clear();
      ctx.ids.set(name, rows[0].id);
      return rows[0].id;
    }
  }
}

// Waits for the advisory lock; on abort or timeout cancels the wait. Where it throws, it has
// closed the session, or returned it to the pool where the cancel proved that it holds nothing.
async function waitForLock(ctx, session, id, mode, stop) {
  const waiting = session.query({ name: `${ctx.prefix}wait-${mode}`, text: ctx.statements.wait[mode], values: [ctx.keySpace, id] });
  waiting.catch(() => {});
  try {
    await Promise.race([waiting, stop.promise]);
  } catch (error) {
    if (!stop.stopped) {
      session.close(true);
      throw error;
    }
    // A cancel that reaches the server before it has read the statement is ignored: it is sent
    // again until the statement ends.
    let cancels = 1;
    cancelStatement(session.client);
    const again = setInterval(() => {
      cancels += 1;
      cancelStatement(session.client);
    }, RECANCEL_MS);
    const canceled = await waiting.then(() => false, (failure) => failure?.code === QUERY_CANCELED);
    clearInterval(again);
    // Canceled by the only cancel sent: none is left in flight to hit a later statement, and the
    // session holds nothing. Otherwise (granted before the cancel arrived, failed, or a second
    // cancel on its way) closing the session ends whatever it holds.
    session.close(!canceled || cancels > 1);
    throw error;
  }
}

// Ends the sessions that hold `id`, having deleted their rows: a stolen holder is not a holder
// that died. Their locks go with their sessions; this request then waits its turn.
async function stealFrom(ctx, session, id) {
  const { rows } = await session.query({ text: ctx.statements.holdersOf, values: [ctx.keySpace, id] });
  if (rows.length === 0) return;
  await session.query({ text: ctx.statements.forgetStolen, values: [rows.map((row) => row.grant_id)] });
  await session.query({ text: 'SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', values: [rows.map((row) => row.backend_pid)] });
}

function deadOwnerOf(dead) {
  if (dead === null || dead.length === 0) return null;
  const { host, pid, backendPid, token } = dead[0];
  return { host, pid, backendPid, token: Number(token) };
}

// Resolves to null (ifAvailable, and the name is taken) or to
// { session, id, grantId, token, deadOwner } holding the name.
async function acquire(ctx, name, mode, { ifAvailable, steal, signal, timeout }) {
  const deadline = timeout === Infinity ? Infinity : performance.now() + timeout;
  const stop = stopper(signal, deadline);
  let session;
  try {
    await ctx.ready();
    session = await checkout(ctx.pool, stop);
    const id = await nameId(ctx, session, name);
    if (ifAvailable) {
      const { rows } = await session.query({ name: `${ctx.prefix}try-${mode}`, text: ctx.statements.tryWait[mode], values: [ctx.keySpace, id] });
      if (!rows[0].got) {
        session.close(false);
        return null;
      }
    } else {
      if (steal) await stealFrom(ctx, session, id);
      const waiting = session;
      session = undefined; // waitForLock() closes it where it gives up
      await waitForLock(ctx, waiting, id, mode, stop);
      session = waiting;
    }
    const { rows } = await session.query({
      name: `${ctx.prefix}grant`,
      text: ctx.statements.grant,
      values: [ctx.keySpace, id, ctx.host, process.pid, mode],
    });
    const [{ grant_id: grantId, token, dead }] = rows;
    return { session, id, grantId, token: Number(token), deadOwner: deadOwnerOf(dead) };
  } catch (error) {
    session?.close(true);
    if (stop.stopped || (typeof error?.code === 'string' && error.code.startsWith('ERR_PARKLOCK_'))) throw error;
    throw serverError(name, error);
  } finally {
    stop.clear();
  }
}

// Gives the name back. Resolves to the error of a lost session, or undefined.
async function release(ctx, holding, mode) {
  const { session, id, grantId } = holding;
  if (session.ended !== null) {
    session.close(true);
    return session.ended;
  }
  try {
    const { rows } = await session.query({ name: `${ctx.prefix}release-${mode}`, text: ctx.statements.release[mode], values: [ctx.keySpace, id, grantId] });
    // false: the session did not hold the lock, which only a lost session could explain.
    session.close(rows[0].released !== true);
    return undefined;
  } catch (error) {
    session.close(true);
    return session.ended ?? error;
  }
}

module.exports = { acquire, release };
