'use strict';
// Argument checks shared by every primitive; each throws the errors from ./errors.js.
const { invalidArgType, outOfRange } = require('./errors');
const { readProperty } = require('./property');
const { validateSignal } = require('./signals');

// A timeout in milliseconds: a non-negative number, Infinity meaning "no timeout".
function validateTimeout(value, name = 'timeout') {
  if (typeof value !== 'number') throw invalidArgType(name, 'of type number', value);
  if (Number.isNaN(value) || value < 0) throw outOfRange(name, '>= 0 (or Infinity)', value);
  return value;
}

// What an omitted options bag means; shared, since the uncontended lockAsync() is a hot path.
const NO_OPTIONS = Object.freeze({ timeout: Infinity, signal: undefined });

// The `{ timeout, signal }` bag of the Promise forms. Small enough to inline into every Promise
// method, so that the common call without options costs one comparison; a bag is read out of line.
function validateAsyncOptions(options) {
  return options === undefined ? NO_OPTIONS : validateOptionsBag(options);
}

function validateOptionsBag(options) {
  if (options === null || typeof options !== 'object') {
    throw invalidArgType('options', 'an object', options);
  }
  const timeout = readProperty(options, 'timeout', 'options');
  const signal = readProperty(options, 'signal', 'options');
  return {
    timeout: timeout === undefined ? Infinity : validateTimeout(timeout, 'options.timeout'),
    signal: validateSignal(signal, 'options.signal'),
  };
}

// An integer from min to max (counts, permits, parties).
function validateInteger(value, name, min, max) {
  if (typeof value !== 'number') throw invalidArgType(name, 'of type number', value);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw outOfRange(name, `an integer from ${min} to ${max}`, value);
  }
  return value;
}

function validateFunction(value, name) {
  if (typeof value !== 'function') throw invalidArgType(name, 'of type function', value);
  return value;
}

module.exports = {
  validateTimeout,
  validateAsyncOptions,
  validateInteger,
  validateFunction,
};
