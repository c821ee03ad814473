'use strict';
// One PostgreSQL session checked out of the pool for one request: it waits for the name's
// advisory lock, holds it, and goes back to the pool only once it holds nothing. The server ends
// the lock with the session, so whatever ends the session ends the hold: the session reports that
// (onEnded) as soon as its client sees the connection fail or close, and while it holds a lock a
// heartbeat statement every `heartbeatMs` finds a connection that died without a word (a host or
// network gone, which TCP alone reports only after minutes).

class Session {
  #client;
  #ended = null;
  #onEnded = null;
  #heartbeat = null;
  #busy = 0;
  #listen = (cause) => this.#end(cause ?? new Error('the connection to the server was closed'));

  constructor(client) {
    this.#client = client;
    client.on('error', this.#listen);
    client.on('end', this.#listen);
  }

  static async open(pool) {
    return new Session(await pool.connect());
  }

  get client() {
    return this.#client;
  }

  // Why the session ended, or null while it lasts.
  get ended() {
    return this.#ended;
  }

  async query(statement) {
    if (this.#ended !== null) throw this.#ended;
    this.#busy += 1;
    try {
      return await this.#client.query(statement);
    } finally {
      this.#busy -= 1;
    }
  }

  // Holding a lock from here on: `onEnded(cause)` is called once if the session ends first.
  watch(onEnded, heartbeatMs) {
    this.#onEnded = onEnded;
    if (this.#ended !== null) {
      onEnded(this.#ended);
      return;
    }
    if (heartbeatMs === Infinity) return;
    this.#heartbeat = setInterval(() => {
      if (this.#busy === 0) this.query('SELECT 1').catch((error) => this.#end(error));
    }, heartbeatMs);
    this.#heartbeat.unref();
  }

  #end(cause) {
    if (this.#ended !== null) return;
    this.#ended = cause;
    const onEnded = this.#onEnded;
    this.#onEnded = null;
    onEnded?.(cause);
  }

  // Back to the pool, or closed (`destroy`) where it may still hold a lock, may still receive a
  // cancel, or has ended.
  close(destroy) {
    clearInterval(this.#heartbeat);
    this.#onEnded = null;
    this.#client.removeListener('error', this.#listen);
    this.#client.removeListener('end', this.#listen);
    // A late 'error' of a closed client must not crash the process.
    if (destroy || this.#ended !== null) this.#client.on('error', () => {});
    this.#client.release(destroy || this.#ended !== null ? true : undefined);
  }
}

module.exports = { Session };
