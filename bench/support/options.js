'use strict';
// Command line of bench/run.js.
const { walkArgv, checkPositiveInteger } = require('./argv');

const USAGE = `usage: node bench/run.js [--quick] [--reps N] [--only a,b,...] [--cpp | --no-cpp]
  --quick        2 short repetitions per case (the whole suite in about 1-2 minutes)
  --reps N       repetitions per case (default 5; --quick: 2)
  --only LIST    only these scenarios (comma-separated; "cpp" for the C++ benchmarks)
  --cpp          also run the C++ benchmarks when --only is given (they run by default)
  --no-cpp       skip the C++ benchmarks (they build build/bench first)
  --no-cpp-build run the C++ benchmark programs already in build/bench instead of building them
  --out NAME     write bench/results/NAME.json (default: latest)`;

function parseOptions(argv, scenarioNames) {
  const options = { quick: false, reps: undefined, only: undefined, cpp: undefined, cppBuild: true, out: 'latest' };
  walkArgv(argv, USAGE, (arg, value) => {
    if (arg === '--quick') options.quick = true;
    else if (arg === '--reps') options.reps = Number(value());
    else if (arg.startsWith('--reps=')) options.reps = Number(arg.slice(7));
    else if (arg === '--only') options.only = value();
    else if (arg.startsWith('--only=')) options.only = arg.slice(7);
    else if (arg === '--cpp') options.cpp = true;
    else if (arg === '--no-cpp') options.cpp = false;
    else if (arg === '--no-cpp-build') options.cppBuild = false;
    else if (arg === '--out') options.out = value();
    else return false;
    return true;
  });
  if (options.reps === undefined) options.reps = options.quick ? 2 : 5;
  checkPositiveInteger('--reps', options.reps);
  if (!/^[\w.-]+$/.test(options.out)) throw new Error('--out takes a file name without a folder');

  let selected = scenarioNames;
  let cppSelected = true;
  if (options.only !== undefined) {
    const wanted = options.only.split(',').map((s) => s.trim().replace(/-/g, '_')).filter(Boolean);
    for (const name of wanted) {
      if (name !== 'cpp' && !scenarioNames.includes(name)) {
        throw new Error(`unknown scenario ${name}; known: ${scenarioNames.join(', ')}, cpp`);
      }
    }
    selected = scenarioNames.filter((name) => wanted.includes(name));
    cppSelected = wanted.includes('cpp');
  }
  if (options.cpp !== undefined) cppSelected = options.cpp;
  return { ...options, scenarios: selected, runCpp: cppSelected };
}

module.exports = { parseOptions };
