'use strict';
// The command-line walk the bench entry points share: --help/-h prints the usage and exits, an
// option the caller does not recognize is an error, and an option that takes a value takes the
// next argument whatever it looks like (so `--out --help` names a file "--help").

// onOption(arg, value) handles one option and returns whether it knew it; value() consumes and
// returns the argument after it.
function walkArgv(argv, usage, onOption) {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      console.log(usage);
      process.exit(0);
    }
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value\n${usage}`);
      return argv[++i];
    };
    if (!onOption(arg, value)) throw new Error(`unknown option ${arg}\n${usage}`);
  }
}

function checkPositiveInteger(name, value) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
}

module.exports = { walkArgv, checkPositiveInteger };
