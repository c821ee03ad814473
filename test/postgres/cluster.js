'use strict';
// A throwaway PostgreSQL server for the tests: PARKLOCK_PG_URL where it is set, else a cluster of
// its own, made with the machine's PostgreSQL binaries (Debian's `postgresql` package) in a
// temporary directory, listening on a Unix socket only, and removed by stop() or when this process
// exits. initdb refuses to run as root, so as root the cluster runs as the `postgres` user.
// Without binaries: { skip: reason }, except under CI=true on Linux, where a missing server is
// { failure: reason }, which fails the test file. Elsewhere than Linux and macOS (Windows under
// Wine, in test/package/platforms.sh) there is no server to start: { skip: reason } always.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const PORT = 5432;
const USER = 'parklock';

function findBinaries() {
  const candidates = [];
  const root = '/usr/lib/postgresql';
  if (fs.existsSync(root)) {
    const versions = fs.readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => b - a);
    candidates.push(...versions.map((v) => path.join(root, v, 'bin')));
  }
  const config = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (config.status === 0) candidates.push(config.stdout.trim());
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'pg_ctl'))) ?? null;
}

// The user the server runs as: this one, or `postgres` where this one is root.
function serverUser() {
  if (process.getuid() !== 0) return { ok: true, prefix: [] };
  const found = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  if (found.status !== 0) return { ok: false, reason: 'running as root and there is no postgres user to run the server as' };
  return { ok: true, prefix: ['runuser', '-u', 'postgres', '--'], uid: Number(found.stdout), gid: Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout) };
}

function run(user, command, args) {
  const [file, ...rest] = [...user.prefix, command, ...args];
  const result = spawnSync(file, rest, { encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed (${result.status ?? result.signal}): ${result.stderr}${result.stdout}`);
  }
  return result.stdout;
}

class Cluster {
  #bin;
  #user;
  #dir;
  #running = false;
  #onExit = () => this.stop();

  constructor(bin, user) {
    this.#bin = bin;
    this.#user = user;
    this.#dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parklock-pg-'));
    if (user.uid !== undefined) fs.chownSync(this.#dir, user.uid, user.gid);
    run(user, path.join(bin, 'initdb'), ['-D', this.#data, '-U', USER, '--auth=trust', '-E', 'UTF8', '--no-sync']);
    process.on('exit', this.#onExit);
  }

  get #data() {
    return path.join(this.#dir, 'data');
  }

  // What pg.Pool and pg.Client take.
  get config() {
    return { host: this.#dir, port: PORT, user: USER, database: 'postgres' };
  }

  start() {
    const options = `-k ${this.#dir} -p ${PORT} -c listen_addresses='' -c fsync=off -c max_connections=300 -c shared_buffers=32MB`;
    run(this.#user, path.join(this.#bin, 'pg_ctl'), ['-D', this.#data, '-o', options, '-l', path.join(this.#dir, 'log'), '-w', 'start']);
    this.#running = true;
  }

  // Stops the server at once (sessions are ended, as in a crash of the server); nothing is lost
  // that a test needs, since the tables are made again on first use.
  halt() {
    if (!this.#running) return;
    this.#running = false;
    run(this.#user, path.join(this.#bin, 'pg_ctl'), ['-D', this.#data, '-m', 'fast', '-w', 'stop']);
  }

  stop() {
    try {
      this.halt();
    } finally {
      process.removeListener('exit', this.#onExit);
      fs.rmSync(this.#dir, { recursive: true, force: true });
    }
  }
}

// { config, cluster } with a server running, or { skip: reason }.
function startServer() {
  if (process.env.PARKLOCK_PG_URL) return { config: { connectionString: process.env.PARKLOCK_PG_URL }, cluster: null };
  if (process.platform !== 'linux' && process.platform !== 'darwin') {
    return { skip: `no PostgreSQL server is started on ${process.platform}; set PARKLOCK_PG_URL to test against one` };
  }
  const missing = (reason) => {
    if (process.env.CI === 'true' && process.platform === 'linux') return { failure: `PostgreSQL is needed under CI=true: ${reason}` };
    return { skip: reason };
  };
  try {
    require.resolve('pg');
  } catch {
    return missing('the pg package is not installed');
  }
  const bin = findBinaries();
  if (bin === null) return missing('no PostgreSQL binaries (initdb, pg_ctl) on this machine and PARKLOCK_PG_URL is not set');
  const user = serverUser();
  if (!user.ok) return missing(user.reason);
  const cluster = new Cluster(bin, user);
  cluster.start();
  return { config: cluster.config, cluster };
}

// The config as a connection string, for what takes only those: the socket directory goes in
// the `host` parameter.
function urlOf(config) {
  if (config.connectionString) return config.connectionString;
  return `postgresql://${config.user}@/${config.database}?host=${encodeURIComponent(config.host)}&port=${config.port}`;
}

module.exports = { startServer, urlOf };
