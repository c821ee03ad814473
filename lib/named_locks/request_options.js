'use strict';
// The arguments every lock manager takes (`locks`, `new LockManager(path)` and the PostgreSQL
// one): a name, and the options of request(), lock() and tryLock(), checked in the order the
// Web Locks specification checks them, so that each manager refuses the same input the same way.
const { invalidArgType } = require('../errors');
const { readProperty } = require('../property');
const { validateTimeout } = require('../validate');
const { validateSignal } = require('../signals');
const { MAX_NAME_UNITS } = require('./table_layout');
const { notSupported, nameTooLong, badCallback } = require('./named_lock_errors');

function validateName(name) {
  // WebIDL's DOMString: any value becomes its string (a Symbol throws a TypeError).
  const text = typeof name === 'string' ? name : `${name}`;
  if (text.startsWith('-')) throw notSupported('Lock names starting with "-" are reserved');
  if (text.length > MAX_NAME_UNITS) throw nameTooLong(text);
  return text;
}

function validateMode(mode, name) {
  if (mode === undefined) return 'exclusive';
  if (mode !== 'exclusive' && mode !== 'shared') {
    throw invalidArgType(name, '"exclusive" or "shared"', mode);
  }
  return mode;
}

// The options of request(), lock() and tryLock(), checked as the specification orders it, in one
// object with the request's checked name and callback (undefined but for request()): one object
// of one shape, which the uncontended request() is measured by.
function validateOptions(options, allowed, name, callback) {
  if (options === undefined || options === null) {
    return { name, callback, mode: 'exclusive', ifAvailable: false, steal: false, signal: undefined, timeout: Infinity };
  }
  if (typeof options !== 'object') throw invalidArgType('options', 'an object', options);
  const read = (key) => (allowed.includes(key) ? readProperty(options, key, 'options') : undefined);
  const mode = validateMode(read('mode'), 'options.mode');
  const ifAvailable = Boolean(read('ifAvailable'));
  const steal = Boolean(read('steal'));
  const signal = validateSignal(read('signal'));
  const timeoutValue = read('timeout');
  const timeout = timeoutValue === undefined ? Infinity : validateTimeout(timeoutValue, 'options.timeout');
  if (steal && ifAvailable) throw notSupported('The "steal" and "ifAvailable" options cannot be used together');
  if (steal && mode !== 'exclusive') throw notSupported('The "steal" option may only be used with "exclusive" locks');
  if (signal !== undefined && (steal || ifAvailable)) {
    throw notSupported('The "signal" option cannot be used with "steal" or "ifAvailable"');
  }
  if (timeout !== Infinity && (steal || ifAvailable)) {
    throw notSupported('The "timeout" option cannot be used with "steal" or "ifAvailable"');
  }
  return { name, callback, mode, ifAvailable, steal, signal, timeout };
}

const REQUEST_OPTIONS = ['mode', 'ifAvailable', 'steal', 'signal', 'timeout'];
const LOCK_OPTIONS = ['mode', 'timeout'];
const TRY_LOCK_OPTIONS = ['mode'];

// The arguments of request(name, callback) or request(name, options, callback), checked:
// { name, callback, mode, ifAvailable, steal, signal, timeout }.
function validateRequest(name, options, callback) {
  if (callback === undefined) {
    callback = options;
    options = undefined;
  }
  const text = validateName(name);
  if (typeof callback !== 'function') throw badCallback(callback);
  return validateOptions(options, REQUEST_OPTIONS, text, callback);
}

module.exports = { validateName, validateOptions, validateRequest, LOCK_OPTIONS, TRY_LOCK_OPTIONS };
