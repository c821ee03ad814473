'use strict';
// What every cross-process benchmark script does around its measurements: the cleanup on any way
// out, and the facts of the run that its report and its JSON begin with.
const os = require('node:os');
const { killAll } = require('./processes');

// Every way out of the run, an interrupt included, kills the children still running and removes
// the run's temporary folder.
function cleanUpOnExit(ctx) {
  process.on('exit', () => {
    killAll();
    ctx.remove();
  });
  for (const [signal, number] of [['SIGINT', 2], ['SIGTERM', 15], ['SIGHUP', 1]]) {
    process.on(signal, () => process.exit(128 + number));
  }
}

// Call at the start of the run; `finish()` at the end gives the run's facts.
function runFacts(options) {
  const startedAt = Date.now();
  const loadavgAtStart = os.loadavg();
  return {
    finish: () => ({
      date: new Date().toISOString(),
      node: process.version,
      platform: `${os.platform()} ${os.arch()}`,
      cpus: os.cpus().length,
      cpuModel: (os.cpus()[0] || {}).model,
      loadavgAtStart,
      loadavgAtEnd: os.loadavg(),
      durationSec: (Date.now() - startedAt) / 1000,
      options,
    }),
  };
}

module.exports = { cleanUpOnExit, runFacts };
