'use strict';
// Node's convention for functions that return a Promise: every error, a bad argument included, is
// reported by rejecting the Promise, never thrown. Every Promise form of parklock is written as a
// plain function (its fast path must not pay for an async function) and gets that behaviour here,
// in one place. A fast path that nothing on it can throw from may come first, outside the wrapper
// (Mutex#lockAsync(), executeLocked()): unoptimized code pays for the wrapper's rest parameters.

// `fn` as a function that returns a rejected Promise where fn throws. Arguments and `this` are
// passed through unchanged, so default parameters behave as in fn.
function rejectingThrows(fn) {
  const { [fn.name]: wrapper } = {
    [fn.name](...args) {
      try {
        return Reflect.apply(fn, this, args);
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
  Object.defineProperty(wrapper, 'length', { value: fn.length });
  return wrapper;
}

// Replaces each named method of `prototype` with its rejectingThrows() form.
function rejectingMethods(prototype, ...keys) {
  for (const key of keys) {
    const descriptor = Object.getOwnPropertyDescriptor(prototype, key);
    Object.defineProperty(prototype, key, { ...descriptor, value: rejectingThrows(descriptor.value) });
  }
}

module.exports = { rejectingThrows, rejectingMethods };
