'use strict';
// The one place that reads the addon's settlements (native.settled: addon/lot/wait_step.h's Outcome):
// outcome() turns a settlement into what a call returns, or into the error it throws, in the
// words of the primitive that asked. CANCELLED never reaches it: a cancelled
// Promise wait rejects with its reason (./async_waits.js).
const native = require('./native');
const { lockError, corrupt, deadlockError, regionLost, tooManyWaiters, OwnerDiedError } = require('./errors');
const { Guard } = require('./guard');
const { endedHolder } = require('./ended_holder');

const {
  ACQUIRED,
  TIMED_OUT,
  CANCELLED,
  NOT_EQUAL,
  LEADER,
  OWNER_DIED,
  ALREADY_HELD,
  NOT_OWNER,
  DEADLOCK,
  REGION_LOST,
  TOO_MANY_WAITERS,
} = native.settled;

// A settlement the primitive has no result for: reported as corruption of its words.
const NONE = Symbol('no result');

// What a primitive calls things: `what` names its words in errors ('mutex'); `acquired`,
// `timedOut`, `notEqual` and `leader` are what those settlements return (left out: the primitive never
// gets it); `ownerDied` names the lock an OwnerDiedError is about (default `what`); `deadlock`
// and `notOwner` are the messages of ALREADY_HELD and NOT_OWNER.
function vocabulary({
  what,
  acquired = NONE,
  timedOut = NONE,
  notEqual = NONE,
  leader = NONE,
  ownerDied = what,
  deadlock,
  notOwner,
}) {
  return Object.freeze({ what, acquired, timedOut, notEqual, leader, ownerDied, deadlock, notOwner });
}

// The value of `settlement` in `words`, or the error it means, thrown. `held` is what the guard
// of an OwnerDiedError releases: the lock was acquired, from an owner that ended holding it, which
// the addon reports right after that settlement; `holders` says who that owner was
// (./ended_holder.js: the lock's HolderSightings, or HERE, its default, or UNKNOWN). undefined (a
// blocking call whose thread is being terminated) throws too, but nothing runs to see it.
function outcome(settlement, words, held, holders) {
  let result = NONE;
  switch (settlement) {
    case ACQUIRED:
      result = words.acquired;
      break;
    case TIMED_OUT:
      result = words.timedOut;
      break;
    case NOT_EQUAL:
      result = words.notEqual;
      break;
    case LEADER:
      result = words.leader;
      break;
    case OWNER_DIED:
      throw new OwnerDiedError(words.ownerDied, new Guard(held), endedHolder(holders));
    case DEADLOCK:
      throw deadlockError(native.deadlockCycle());
    case REGION_LOST:
      throw regionLost();
    case ALREADY_HELD:
      if (words.deadlock !== undefined) throw lockError('ERR_PARKLOCK_DEADLOCK', words.deadlock);
      break;
    case NOT_OWNER:
      if (words.notOwner !== undefined) throw lockError('ERR_PARKLOCK_NOT_OWNER', words.notOwner);
      break;
    case TOO_MANY_WAITERS:
      throw tooManyWaiters();
  }
  if (result === NONE) throw corrupt(words.what);
  return result;
}

// The `outcome` a parklock:wait:end event reports for `settlement` (./diagnostics.js); undefined
// is a blocking wait whose thread is being terminated.
const TRACE_NAMES = new Map([
  [ACQUIRED, 'acquired'],
  [LEADER, 'acquired'],
  [TIMED_OUT, 'timed-out'],
  [CANCELLED, 'cancelled'],
  [OWNER_DIED, 'owner-died'],
  [DEADLOCK, 'deadlock'],
  [ALREADY_HELD, 'deadlock'],
  [NOT_EQUAL, 'not-equal'],
  [undefined, 'interrupted'],
]);

function traceName(settlement) {
  return TRACE_NAMES.get(settlement) || 'error';
}

module.exports = { vocabulary, outcome, traceName };
