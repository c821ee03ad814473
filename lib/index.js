'use strict';
const { Mutex, AsyncLock } = require('./mutex');
const { TimeoutError } = require('./errors');
const futex = require('./futex');
const native = require('./native');

module.exports = {
  Mutex,
  AsyncLock,
  TimeoutError,
  futex,
  // The shared-memory layouts, as the addon defines them (see addon/*.h).
  layouts: Object.freeze({ mutex: Object.freeze({ ...native.mutexLayout }) }),
};
