#!/usr/bin/env bash
# The cross-process suites again, with PARKLOCK_CROSS_PROCESS=portable: every part of macOS's
# mechanism (addon/across_processes/mechanism.h: the doorbell, liveness by pid and start time,
# flock, named creation) but its one OS call, on Linux. Needs the addon and build/cpp built
# (npm test builds both). About 2 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
export PARKLOCK_CROSS_PROCESS=portable

node -e "const n = require('./lib/native'); if (n.crossProcessMechanism !== 'doorbell') { console.error('the addon ignores PARKLOCK_CROSS_PROCESS: ' + n.crossProcessMechanism); process.exit(1); }"
# The whole C++ suite: the tests of the other mechanism skip themselves.
ctest --test-dir build/cpp --output-on-failure
bash test/cross_process_suite.sh
