'use strict';
// `locks`: the process's own LockManager, whose names every thread of the process shares.
const { LockManager, PROCESS } = require('./lock_manager');

const locks = new LockManager(PROCESS);

module.exports = { locks };
