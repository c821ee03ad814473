#!/usr/bin/env bash
# Every JavaScript test file that maps a region, through sharedMemory() or a LockManager's file:
# the cross-process suite. Run by test/portable.sh (Linux, with the doorbell mechanism) and by
# prebuild.yml on macOS and Windows runners.
set -euo pipefail
cd "$(dirname "$0")/.."
node --test --test-concurrency=1 \
  test/shared_region.test.js test/shared_region_lifetime.test.js test/shared_region_placement.test.js \
  test/rwlock_across_processes.test.js test/chaos_across_processes.test.js test/lock_manager.test.js \
  test/owner_death_readme.test.js test/docs.test.js
