'use strict';
// Reading the properties of an argument object. A Proxy that fails a read (revoked, or a trap that
// breaks the language's invariants) fails it with V8's own TypeError, which has no `code`; it is
// reported here as the bad argument it is, with V8's error as the cause. A getter's or a trap's
// own exception is the caller's business, but a trap's cannot be told apart from V8's, so every
// failed read that went through a Proxy (the object or one up its prototype chain) is reported
// this way; a getter of an ordinary object throws unchanged.
const { isProxy } = require('node:util').types;
const { invalidArgType } = require('./errors');

// Object.getPrototypeOf runs no code of the caller's until it reaches a Proxy, where this stops.
function reachesProxy(object) {
  for (let o = object; o !== null; o = Object.getPrototypeOf(o)) {
    if (isProxy(o)) return true;
  }
  return false;
}

function badObject(error, object, name) {
  if (!reachesProxy(object)) return error;
  const wrapped = invalidArgType(name, 'an object whose properties can be read', object);
  wrapped.cause = error;
  return wrapped;
}

// object[key], where `object` is (part of) the argument called `name`.
function readProperty(object, key, name) {
  try {
    return object[key];
  } catch (error) {
    throw badObject(error, object, name);
  }
}

// key in object, likewise.
function hasProperty(object, key, name) {
  try {
    return key in object;
  } catch (error) {
    throw badObject(error, object, name);
  }
}

module.exports = { readProperty, hasProperty };
