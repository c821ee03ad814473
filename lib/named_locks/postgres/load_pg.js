'use strict';
// node-postgres (`pg`) is an optional peer dependency: it is required only when a
// PostgresLockManager is made, so that parklock loads and works without it.
const { lockError } = require('../../errors');

let pg;

function loadPg() {
  if (pg !== undefined) return pg;
  try {
    pg = require('pg');
  } catch (cause) {
    if (cause?.code !== 'MODULE_NOT_FOUND') throw cause;
    const error = lockError(
      'ERR_PARKLOCK_PG_MISSING',
      'PostgresLockManager needs node-postgres: install it with `npm install pg` (parklock lists it as an optional peer dependency)',
    );
    error.cause = cause;
    throw error;
  }
  return pg;
}

module.exports = { loadPg };
