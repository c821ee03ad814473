'use strict';
// node bench/report.js [--out NAME] RESULTS.json...: merges the results of several runs of
// bench/run.js (each written with --out, e.g. one run per scenario on a machine whose commands are
// time-limited), prints their tables and the targets evaluated over all of them, and with --out
// writes the merged results to bench/results/NAME.json. A scenario measured in more than one file
// is taken from the last.
const fs = require('node:fs');
const path = require('node:path');
const { formatScenario, formatCpp, formatTargets } = require('./support/table');
const { evaluateTargets } = require('./support/targets');

function merge(files) {
  const runs = files.map((file) => JSON.parse(fs.readFileSync(file, 'utf8')));
  const merged = { meta: { ...runs[0].meta, runs: runs.map((r) => r.meta) }, scenarios: {}, cpp: null };
  merged.calibration = runs[0].calibration;
  for (const run of runs) {
    Object.assign(merged.scenarios, run.scenarios);
    if (run.cpp) merged.cpp = run.cpp;
  }
  merged.targets = evaluateTargets(merged);
  return merged;
}

function main(argv) {
  let out;
  const files = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out') out = argv[++i];
    else files.push(argv[i]);
  }
  if (files.length === 0 || (out !== undefined && !/^[\w.-]+$/.test(out))) {
    throw new Error('usage: node bench/report.js [--out NAME] RESULTS.json...');
  }
  const merged = merge(files);
  const { meta } = merged;
  console.log(`parklock bench: node ${meta.node}, ${meta.cpus} CPUs (${meta.cpuModel}), ` +
    `${files.length} run(s) merged`);
  for (const scenario of Object.values(merged.scenarios)) console.log(formatScenario(scenario));
  if (merged.cpp) console.log(formatCpp(merged.cpp));
  console.log(formatTargets(merged.targets));
  if (out !== undefined) {
    const file = path.join(__dirname, 'results', `${out}.json`);
    fs.writeFileSync(file, `${JSON.stringify(merged, null, 2)}\n`);
    console.log(`\nwrote ${path.relative(process.cwd(), file)}`);
  }
}

try {
  main(process.argv.slice(2));
} catch (error) {
  console.error(error.message);
  process.exitCode = 1;
}
