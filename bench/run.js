'use strict';
// npm run bench: runs every scenario (bench/scenarios/*.js) against every implementation it
// lists, with repetitions, each measurement in a fresh child process; prints a table of medians
// with ratios against the baselines measured in the same run, evaluates the targets, and writes
// bench/results/latest.json and bench/results/contention.svg. See support/options.js for flags.
//
// Repetitions are interleaved (rep 1 of every case, then rep 2, ...) and the order of the cases
// rotates from one repetition to the next, so that a burst of load on this shared machine
// lands on different implementations instead of all the runs of one.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseOptions } = require('./support/options');
const { IMPLEMENTATIONS } = require('./support/implementations');
const { runInChild } = require('./support/spawn');
const { calibrateSteps } = require('./support/work');
const { median, min, max } = require('./support/stats');
const { formatScenario, formatCpp, formatTargets } = require('./support/table');
const { evaluateTargets } = require('./support/targets');
const { renderContentionSvg } = require('./support/svg');
const { runCpp } = require('./cpp/run');

// The order they run and print in.
const SCENARIOS = [
  'uncontended_sync',
  'uncontended_async',
  'contended_tiny',
  'contended_work',
  'burst',
  'all_async',
  'mixed',
  'ping_pong',
  'memory',
  'condition_requeue',
  'rwlock_read',
  'rwlock_write',
  'rwlock_writer_share',
  'semaphore',
  'diagnostics_cost',
];
const RESULTS_DIR = path.join(__dirname, 'results');

function casesOf(scenario, quick) {
  if (scenario.cases) return scenario.cases({ quick });
  // Parameter-major, so the rows to compare (same parameter) sit together in the table.
  return scenario.params({ quick }).flatMap((param) =>
    scenario.implementations.map((impl) => ({ impl, param })));
}

function rotate(list, by) {
  const k = by % list.length;
  return [...list.slice(k), ...list.slice(0, k)];
}

function execArgvFor(scenario, impl) {
  const flags = [...(scenario.execArgv || [])];
  if (IMPLEMENTATIONS[impl] && IMPLEMENTATIONS[impl].needsHarmony) flags.push('--harmony-struct');
  return flags;
}

async function runScenario(name, options, calibration) {
  const scenario = require(`./scenarios/${name}`);
  const records = casesOf(scenario, options.quick).map((c) => ({ ...c, outcomes: [] }));
  process.stdout.write(`${name}: `);
  for (let rep = 0; rep < options.reps; rep++) {
    for (const record of rotate(records, rep)) {
      if (record.outcomes.some((o) => o.status === 'skipped')) continue;
      const spec = {
        scenario: name,
        impl: record.impl,
        param: record.param,
        quick: options.quick,
        steps: calibration.steps,
        rep,
      };
      const outcome = await runInChild(spec, {
        execArgv: execArgvFor(scenario, record.impl),
        timeLimitMs: scenario.timeLimitMs(options.quick) + 15_000,
      });
      record.outcomes.push(outcome);
      process.stdout.write({ ok: '.', failed: 'F', skipped: 's' }[outcome.status] || '?');
    }
    process.stdout.write(rep + 1 < options.reps ? ' ' : '\n');
  }
  return aggregate(name, scenario, records);
}

function aggregate(name, scenario, records) {
  const metrics = scenario.metrics;
  const rows = records.map(({ impl, param, outcomes }) => {
    const ok = outcomes.filter((o) => o.status === 'ok');
    const skipped = outcomes.find((o) => o.status === 'skipped');
    const values = Object.fromEntries(metrics.map((m) =>
      [m.key, ok.map((o) => o.metrics[m.key]).filter((v) => typeof v === 'number')]));
    const each = (fn) => Object.fromEntries(metrics.map((m) => [m.key, fn(values[m.key])]));
    return {
      impl,
      label: (scenario.labels && scenario.labels[impl]) || (IMPLEMENTATIONS[impl] || {}).label || impl,
      param: param === undefined ? null : param,
      runs: skipped ? 0 : outcomes.length,
      ok: ok.length,
      skipped: skipped ? skipped.reason : null,
      failures: outcomes.filter((o) => o.status === 'failed').map((o) => o.reason),
      values,
      median: each(median),
      min: each(min),
      max: each(max),
    };
  });
  return {
    name,
    title: scenario.title,
    paramLabel: scenario.paramLabel,
    metrics,
    primary: scenario.primary || metrics[0].key,
    baselines: scenario.baselines,
    chart: Boolean(scenario.chart),
    info: scenario.info ? safeInfo(scenario) : undefined,
    rows,
  };
}

function safeInfo(scenario) {
  try {
    return scenario.info();
  } catch (error) {
    return { title: 'info unavailable', values: { error: error.message } };
  }
}

async function main() {
  const options = parseOptions(process.argv.slice(2), SCENARIOS);
  const startedAt = Date.now();
  const meta = {
    date: new Date().toISOString(),
    node: process.version,
    v8: process.versions.v8,
    platform: `${os.platform()} ${os.arch()}`,
    cpus: os.cpus().length,
    cpuModel: (os.cpus()[0] || {}).model,
    loadavgAtStart: os.loadavg(),
    argv: process.argv.slice(2),
    reps: options.reps,
    quick: options.quick,
  };
  console.log(`parklock bench: node ${meta.node}, ${meta.cpus} CPUs, load ${meta.loadavgAtStart
    .map((l) => l.toFixed(1)).join(' ')}, ${options.reps} rep(s)${options.quick ? ', quick' : ''}`);
  const calibration = calibrateSteps();
  console.log(`~2 µs critical section = ${calibration.steps} xorshift steps ` +
    `(${calibration.nsPerStep.toFixed(2)} ns/step)\n`);

  const results = { meta, calibration, scenarios: {}, cpp: null, targets: [] };
  for (const name of options.scenarios) {
    results.scenarios[name] = await runScenario(name, options, calibration);
  }
  if (options.runCpp) {
    results.cpp = await runCpp({
      quick: options.quick, repetitions: options.reps, build: options.cppBuild, log: console.log,
    });
  }
  results.targets = evaluateTargets(results);
  meta.loadavgAtEnd = os.loadavg();
  meta.durationSec = (Date.now() - startedAt) / 1000;

  for (const scenario of Object.values(results.scenarios)) console.log(formatScenario(scenario));
  if (results.cpp) console.log(formatCpp(results.cpp));
  console.log(formatTargets(results.targets));

  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  fs.writeFileSync(path.join(RESULTS_DIR, `${options.out}.json`), `${JSON.stringify(results, null, 2)}\n`);
  const charted = ['contended_tiny', 'contended_work'].map((n) => results.scenarios[n]).filter(Boolean);
  if (charted.length > 0) {
    const caption = `${meta.date} node ${meta.node}, ${meta.cpus} CPUs, ${options.reps} rep(s)` +
      `${options.quick ? ' (quick)' : ''}, load ${meta.loadavgAtStart[0].toFixed(1)}`;
    fs.writeFileSync(path.join(RESULTS_DIR, 'contention.svg'), renderContentionSvg(charted, caption));
  }
  console.log(`\nwrote bench/results/${options.out}.json${charted.length ? ' and bench/results/contention.svg' : ''} ` +
    `(${meta.durationSec.toFixed(0)} s)`);
}

main().catch((error) => {
  console.error(error.message);
  process.exitCode = 1;
});
