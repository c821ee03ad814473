'use strict';
// The errors of the PostgreSQL lock manager, each with a `code`. What the server or the driver
// reports is kept as `cause`, with its SQLSTATE (`cause.code`) where there is one.
const { lockError } = require('../../errors');

function noBlockingLock() {
  return lockError(
    'ERR_PARKLOCK_UNSUPPORTED',
    'PostgresLockManager has no blocking lock(): waiting for a PostgreSQL lock is a network round ' +
      'trip, which a thread cannot block on without stopping its event loop, the one that reads the ' +
      'reply; use await manager.request() or await manager.tryLock()',
  );
}

// The server or the connection to it failed while a request waited or began to hold (`name`), or
// while query() ran (null): a request took nothing (a session that ends gives back every lock it
// held).
function serverError(name, cause) {
  const detail = cause?.message ?? String(cause);
  const what = name === null ? 'query()' : `The lock request for "${name}"`;
  const error = lockError('ERR_PARKLOCK_POSTGRES', `${what} failed at the PostgreSQL server or its connection: ${detail}`);
  error.cause = cause;
  return error;
}

// The session that held the lock ended (its connection was lost, the server restarted, or
// pg_terminate_backend ended it, which a { steal: true } request does to the holders it takes a
// name from): from that moment another session could hold the name.
function lockLost(name, cause) {
  const detail = cause?.message ?? String(cause);
  const error = lockError(
    'ERR_PARKLOCK_LOCK_LOST',
    `The session that held the lock "${name}" ended, so the lock was lost while the callback ran (${detail})`,
  );
  error.cause = cause;
  return error;
}

module.exports = { noBlockingLock, serverError, lockLost };
