'use strict';
// What a PostgresLockManager grants: the Lock of request()'s callback and the guard of tryLock().
// Beside the fields of every manager's Lock (name, mode, ownerDied, deadOwner, signal) it has
// `token`, the fencing token: the number of grants of the name so far, this one included, over
// every client of the database, so a later grant always has a larger one.
const asyncDispose = Symbol.asyncDispose || Symbol.for('nodejs.asyncDispose');

// Aborts a lock's signal with `error`: kept off the lock that users see.
let loseLock;

class PostgresLock {
  #name;
  #mode;
  #token;
  #deadOwner;
  #controller = new AbortController();

  constructor(name, mode, token, deadOwner) {
    this.#name = name;
    this.#mode = mode;
    this.#token = token;
    this.#deadOwner = deadOwner;
  }

  get name() {
    return this.#name;
  }

  get mode() {
    return this.#mode;
  }

  get token() {
    return this.#token;
  }

  get ownerDied() {
    return this.#deadOwner !== null;
  }

  // { host, pid, backendPid, token } of the holder whose session ended while it held the name
  // (the last one, where several shared holders ended), or null.
  get deadOwner() {
    return this.#deadOwner;
  }

  // Aborts when the holding session ends (so the lock is gone), with the ERR_PARKLOCK_LOCK_LOST
  // error the request then rejects with.
  get signal() {
    return this.#controller.signal;
  }

  static {
    loseLock = (lock, error) => {
      if (!lock.#controller.signal.aborted) lock.#controller.abort(error);
    };
  }
}

// tryLock()'s: the Lock, and an unlock() that returns a Promise (the release is a statement).
class PostgresLockGuard extends PostgresLock {
  #release;

  constructor(name, mode, token, deadOwner, release) {
    super(name, mode, token, deadOwner);
    this.#release = release;
  }

  // Releases once; later calls resolve at once. Rejects with ERR_PARKLOCK_LOCK_LOST where the
  // session had ended while holding.
  unlock() {
    const release = this.#release;
    if (release === undefined) return Promise.resolve();
    this.#release = undefined;
    return release();
  }

  get released() {
    return this.#release === undefined;
  }

  // `await using guard = await manager.tryLock(name)`; there is no synchronous [Symbol.dispose],
  // since a release that is not awaited could not report its failure.
  [asyncDispose]() {
    return this.unlock();
  }
}

module.exports = { PostgresLock, PostgresLockGuard, loseLock };
