'use strict';
// The addon's handles of this thread's primitives (made on first contention), and which instance
// each address belongs to, so that inspect() can point at the object behind what it reports.
// Weak: an instance that is no longer referenced is not kept alive by being listed.
const native = require('./native');

const byAddress = new Map(); // address (as the addon reports it) -> WeakRef of the instance
const forget = new FinalizationRegistry((address) => {
  const ref = byAddress.get(address);
  if (ref !== undefined && ref.deref() === undefined) byAddress.delete(address);
});

// The handle of `words` (the first `count` of them), made for `instance`.
function handleFor(instance, words, count) {
  const handle = native.handle(words, count);
  const address = native.addressOf(handle);
  byAddress.set(address, new WeakRef(instance));
  forget.register(instance, address);
  return handle;
}

// The instance of this thread whose words are at `address`, if any is alive.
function instanceAt(address) {
  const ref = byAddress.get(address);
  return ref === undefined ? undefined : ref.deref();
}

module.exports = { handleFor, instanceAt };
