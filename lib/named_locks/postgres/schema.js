'use strict';
// The two tables of a PostgresLockManager, in the schema it is given (default `public`), and the
// statements that use them. Made on first use; made once even when several processes start at
// once, since the making runs under a transaction-level advisory lock.
//
//   parklock_names    name text UNIQUE -> id integer: a name's lock is the advisory lock on the
//                     two keys (key space, id), so two names never share a lock (no hashing).
//                     `token` counts the grants of the name: the fencing token.
//   parklock_holders  one row per grant held: who holds it (host, pid, the session's backend pid)
//                     and its token. A clean release deletes its row; a row whose session no longer
//                     holds the advisory lock is a holder that ended while holding, which the next
//                     grant of the name reports (ownerDied) and deletes.
//
// The key space (first advisory key) is the OID of the names table, an integer no other table
// of the database has: two managers with different schemas never share a lock, and other code
// takes the same locks only by using the same pair of keys. A name's id is the second key, so a
// schema has room for 2,147,483,647 names over its life.

// The first key of the lock that serializes making the tables: no name has id 0.
const SETUP_KEY = [1886088299, 0];

function statementsFor(schema, escapeIdentifier) {
  const s = escapeIdentifier(schema);
  const names = `${s}.parklock_names`;
  const holders = `${s}.parklock_holders`;
  // A holder row is alive while its backend holds the name's advisory lock; pg_locks shows the
  // two-key form as classid = key 1, objid = key 2, objsubid = 2.
  // $1 is the key space; `id` the name's id.
  const holds = (pid, id) => `EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.classid = ($1::bigint & 4294967295)::oid AND l.objid = ${id}::bigint::oid AND l.objsubid = 2
      AND l.pid = ${pid})`;
  return {
    exists: { text: 'SELECT to_regclass($1) IS NOT NULL AS made', values: [`${s}.parklock_holders`] },
    make: [
      'BEGIN',
      `SELECT pg_advisory_xact_lock(${SETUP_KEY[0]}, ${SETUP_KEY[1]})`,
      `CREATE SCHEMA IF NOT EXISTS ${s}`,
      `CREATE TABLE IF NOT EXISTS ${names} (
         id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
         name text NOT NULL UNIQUE,
         token bigint NOT NULL DEFAULT 0)`,
      `CREATE TABLE IF NOT EXISTS ${holders} (
         grant_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
         name_id integer NOT NULL,
         backend_pid integer NOT NULL,
         mode text NOT NULL,
         host text NOT NULL,
         pid integer NOT NULL,
         token bigint NOT NULL,
         granted_at timestamptz NOT NULL DEFAULT now())`,
      `CREATE INDEX IF NOT EXISTS parklock_holders_by_name ON ${holders} (name_id)`,
      'COMMIT',
    ],
    keySpace: { text: 'SELECT $1::regclass::oid::bigint AS oid', values: [names] },
    // A name's id, made on its first use. A concurrent first use of the same name makes this
    // return no row (the other insert wins the conflict and is not in this statement's
    // snapshot): the caller asks again.
    nameId: `WITH found AS (SELECT id FROM ${names} WHERE name = $1),
      made AS (INSERT INTO ${names} (name) SELECT $1 WHERE NOT EXISTS (SELECT 1 FROM found)
               ON CONFLICT (name) DO NOTHING RETURNING id)
      SELECT id FROM found UNION ALL SELECT id FROM made`,
    wait: { exclusive: 'SELECT pg_advisory_lock($1, $2)', shared: 'SELECT pg_advisory_lock_shared($1, $2)' },
    tryWait: { exclusive: 'SELECT pg_try_advisory_lock($1, $2) AS got', shared: 'SELECT pg_try_advisory_lock_shared($1, $2) AS got' },
    // Run holding the advisory lock: frees the rows of holders that ended, takes the next token
    // (the row lock of the UPDATE orders shared holders that are granted together) and records
    // this grant. $1 key space, $2 name id, $3 host, $4 pid, $5 mode.
    grant: `WITH dead AS (
        DELETE FROM ${holders} h WHERE h.name_id = $2 AND NOT ${holds('h.backend_pid', '$2')}
        RETURNING h.host, h.pid, h.backend_pid, h.token),
      bumped AS (UPDATE ${names} SET token = token + 1 WHERE id = $2 RETURNING token),
      mine AS (INSERT INTO ${holders} (name_id, backend_pid, mode, host, pid, token)
               SELECT $2, pg_backend_pid(), $5, $3, $4, token FROM bumped RETURNING grant_id, token)
      SELECT mine.grant_id, mine.token::text AS token,
        (SELECT json_agg(json_build_object('host', host, 'pid', pid, 'backendPid', backend_pid, 'token', token::text)
                ORDER BY token DESC) FROM dead) AS dead
      FROM mine`,
    // The row goes before the lock: the statement reads every row the DELETE returns before it
    // unlocks, so the row is locked for deletion when the next holder's grant looks at it, and
    // that grant waits for this statement's commit and then finds no row to report as dead.
    release: {
      exclusive: `WITH mine AS (DELETE FROM ${holders} WHERE grant_id = $3 RETURNING 1)
        SELECT pg_advisory_unlock($1, $2) AS released FROM (SELECT count(*) FROM mine) AS gone`,
      shared: `WITH mine AS (DELETE FROM ${holders} WHERE grant_id = $3 RETURNING 1)
        SELECT pg_advisory_unlock_shared($1, $2) AS released FROM (SELECT count(*) FROM mine) AS gone`,
    },
    // The backends holding a name, for a steal to end. $1 key space, $2 name id.
    holdersOf: `SELECT h.grant_id, h.backend_pid FROM ${holders} h WHERE h.name_id = $2 AND ${holds('h.backend_pid', '$2')}`,
    forgetStolen: `DELETE FROM ${holders} WHERE grant_id = ANY($1::bigint[])`,
    // query(): rows whose session still holds the name, and the sessions waiting for a name.
    held: `SELECT n.name, h.mode, h.host, h.pid, h.backend_pid, h.token::text AS token
      FROM ${holders} h JOIN ${names} n ON n.id = h.name_id
      WHERE ${holds('h.backend_pid', 'h.name_id')}
      ORDER BY h.grant_id`,
    pending: `SELECT n.name, CASE WHEN l.mode = 'ShareLock' THEN 'shared' ELSE 'exclusive' END AS mode, l.pid AS backend_pid
      FROM pg_locks l JOIN ${names} n ON n.id = l.objid::bigint
      WHERE l.locktype = 'advisory' AND NOT l.granted AND l.objsubid = 2
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.classid = ($1::bigint & 4294967295)::oid
      ORDER BY l.pid`,
  };
}

module.exports = { statementsFor };
