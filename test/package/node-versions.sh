#!/usr/bin/env bash
# Runs the JavaScript suite on other Node versions with the very binary that ships
# (prebuilds/linux-x64-glibc, through PARKLOCK_NATIVE_PATH): one Node-API binary for every Node.
# Usage: test/package/node-versions.sh [MAJOR...]   (default: 20 via the machine's node, and 26)
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/package/tools.sh

export PARKLOCK_NATIVE_PATH="$PWD/prebuilds/linux-x64-glibc/parklock.node"
versions=("$@")
[ "${#versions[@]}" -gt 0 ] || versions=(system 26)

for version in "${versions[@]}"; do
  node="$(node_bin "$version")"
  echo "== node $("$node" --version) with $PARKLOCK_NATIVE_PATH"
  # One file per process: Node 18 has no --test-concurrency, and a failure names its file.
  for file in test/*.test.js test/*.test.mjs; do
    "$node" --test --test-reporter=tap "$file" >"build/node-versions.log" 2>&1 || {
      cat build/node-versions.log
      echo "FAILED on node $("$node" --version): $file" >&2
      exit 1
    }
    echo "  ok $file ($(grep -E "^# (pass|fail) " build/node-versions.log | tr "\n" " "))"
  done
done
echo "node-versions: ok"
