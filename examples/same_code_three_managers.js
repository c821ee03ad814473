'use strict';
// One application, three lock managers: the code that uses the lock is the same, and only the
// line that makes the manager changes.
//
//   node examples/same_code_three_managers.js threads    # locks: the threads of this process
//   node examples/same_code_three_managers.js file       # new LockManager(path): processes of one machine
//   node examples/same_code_three_managers.js postgres postgres://user@host/db
//                                                         # PostgresLockManager: processes on any machine
//
// Eight jobs each add to a balance 25 times by reading it, pausing, and writing it back: without
// the lock most additions are lost; with it the balance is exact.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { locks, LockManager, PostgresLockManager } = require('parklock');

const [kind = 'threads', url] = process.argv.slice(2);
const lockFile = path.join(os.tmpdir(), `parklock-example-${process.pid}.locks`);

// The only line that differs between the three.
const manager = { threads: () => locks, file: () => new LockManager(lockFile), postgres: () => new PostgresLockManager(url) }[kind]();

// ---- the application: the same for every manager ----
const account = { balance: 0 };
const pause = () => new Promise((resolve) => setTimeout(resolve, 1));

async function deposit(amount) {
  await manager.request('account', async (lock) => {
    if (lock.ownerDied) console.log('the previous holder died holding the account: check it');
    const seen = account.balance;
    await pause();
    account.balance = seen + amount;
  });
}

async function job() {
  for (let i = 0; i < 25; i += 1) await deposit(1);
}

async function main() {
  await Promise.all(Array.from({ length: 8 }, job));
  console.log(`${kind}: balance ${account.balance} of ${8 * 25}`);
}
// ---- end of the application ----

main()
  .finally(async () => {
    if (kind === 'postgres') await manager.end();
    // Windows removes no file that a process maps: there it stays in the temporary directory.
    if (process.platform !== 'win32') fs.rmSync(lockFile, { force: true });
  })
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
