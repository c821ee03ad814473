'use strict';
// The two reader-writer locks of the writer-share scenario (both sides of each are used, so they
// are not among support/implementations.js's lock/unlock pairs), made in the coordinator and
// opened in each worker.
const { JsRwLock } = require('../baselines/js_rwlock');
const { paddedBuffer } = require('./implementations');

const LABELS = {
  'parklock-rw': 'parklock RWLock',
  'js-rwlock': 'pure-JS reader-writer lock',
};

function openRwLock(impl, { buffer, byteOffset }) {
  if (impl === 'js-rwlock') return new JsRwLock(buffer, byteOffset);
  if (impl !== 'parklock-rw') throw new Error(`unknown reader-writer lock ${impl}`);
  const { RWLock } = require('../../lib');
  return new RWLock(buffer, byteOffset);
}

module.exports = { LABELS, createRwLock: paddedBuffer, openRwLock };
