'use strict';
// Every run ends by checking the counter the lock protected: it is incremented with a plain,
// non-atomic read and write, so if the lock ever let two threads in at once, increments are lost
// and the count comes out short. A mismatch makes the measurement a failure, not a number.
const { CONTROL } = require('./control');

function checkCount(actual, expected, what = 'protected counter') {
  if (actual !== expected) {
    throw new Error(`${what} is ${actual}, expected ${expected}: the lock did not exclude`);
  }
}

// Int32 wraps; compare modulo 2^32 as the counter itself does.
function checkControlCounter(ctl, expectedTotal) {
  checkCount(Atomics.load(ctl, CONTROL.COUNTER), expectedTotal | 0);
}

module.exports = { checkCount, checkControlCounter };
