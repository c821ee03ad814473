'use strict';
// The native addon, loaded for this process (see lib/loader.js for where it is looked for).
module.exports = require('./loader').load();
