#!/usr/bin/env bash
# Packs parklock and installs the tarball into fresh apps the way a user would, then uses it from
# CommonJS and ESM, on the main thread and in workers:
#   - Node 24 with npm 12 (which runs no dependency install scripts) and the machine's Node/npm,
#     each with a PATH that holds no compiler and no cmake, in a directory whose path has spaces;
#     the prebuilt binary must load, and node_modules must stay at most 2 packages and 5.1 MB (the
#     tarball, every platform's binary included, at most 1.9 MB);
#   - then a source build inside one of those apps (scripts/build-from-source.js, path with
#     spaces), which fetches the build tools from the npm registry and needs cmake and g++.
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/package/tools.sh

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
here="$PWD/test/package"

node scripts/source-hash.js --check
npm pack --ignore-scripts --silent --pack-destination "$work" >/dev/null
tarball="$(echo "$work"/parklock-*.tgz)"
echo "tarball: $(basename "$tarball"), $(stat -c %s "$tarball") bytes, $(tar tzf "$tarball" | wc -l) files"
[ "$(stat -c %s "$tarball")" -le 1900000 ] || { echo "the tarball is over 1.9 MB" >&2; exit 1; }
if tar tzf "$tarball" | grep -E '^package/(build|node_modules|test|bench)/'; then
  echo "the tarball holds build output or development files" >&2
  exit 1
fi

# An isolated npm config: the machine's user config must not leak into what a user would see.
: >"$work/npmrc"

# A directory of links to just node and npm, to serve as the whole PATH.
bare_path() {
  local dir="$1" node="$2" npm_cli="$3"
  mkdir -p "$dir"
  ln -s "$node" "$dir/node"
  ln -s "$npm_cli" "$dir/npm"
  for tool in cmake c++ g++ gcc cc clang clang++ make; do
    if PATH="$dir" command -v "$tool" >/dev/null; then
      echo "bare PATH still has $tool" >&2
      exit 1
    fi
  done
  echo "$dir"
}

in_app() {
  local app="$1" path="$2"
  shift 2
  (cd "$app" && env -i HOME="$HOME" PATH="$path" npm_config_userconfig="$work/npmrc" "$@")
}

install_and_use() {
  local label="$1" node="$2" npm_cli="$3"
  local app="$work/app with spaces/$label"
  local path
  path="$(bare_path "$work/bin $label" "$node" "$npm_cli")"
  mkdir -p "$app"
  echo '{ "name": "app", "version": "1.0.0", "private": true }' >"$app/package.json"
  cp "$here/use.cjs" "$here/use.mjs" "$app/"
  echo "== $label: node $("$node" --version), npm $(in_app "$app" "$path" npm --version)"
  in_app "$app" "$path" npm install --no-audit --no-fund "$tarball" 2>&1 | tee "$work/out"
  # parklock has no install-time scripts, so no package manager has anything to block or approve.
  if grep -qi "install-scripts\|allowScripts" "$work/out"; then
    echo "npm reports install scripts for parklock" >&2
    exit 1
  fi

  local packages bytes
  packages="$(find "$app/node_modules" -name package.json -not -path '*/node_modules/*/node_modules/*/*' \
    -path '*/node_modules/*/package.json' | wc -l)"
  bytes="$(du -sb "$app/node_modules" | cut -f1)"
  echo "node_modules: $packages package(s), $bytes bytes"
  [ "$packages" -le 2 ] || { echo "more than 2 packages" >&2; exit 1; }
  [ "$bytes" -lt 5100000 ] || { echo "node_modules is 5.1 MB or more" >&2; exit 1; }
  [ ! -e "$app/node_modules/parklock/build" ] || { echo "something was built at install time" >&2; exit 1; }

  in_app "$app" "$path" node use.cjs | tee "$work/out"
  grep -q "prebuilds/linux-x64-glibc/parklock.node" "$work/out"
  in_app "$app" "$path" node use.mjs
}

install_and_use "node24 npm12" "$(node_bin 24)" "$tools/node_modules/npm12/bin/npm-cli.js"
install_and_use "system" "$(node_bin system)" "$(readlink -f "$(command -v npm)")"

if [ "${PARKLOCK_SKIP_SOURCE_BUILD:-}" != 1 ]; then
  echo "== source build inside an installed copy (path with spaces)"
  app="$work/app with spaces/system"
  in_app "$app" "$PATH" node node_modules/parklock/scripts/build-from-source.js
  in_app "$app" "$PATH" node use.cjs | tee "$work/out"
  grep -q "node_modules/parklock/build/addon/Release/parklock.node" "$work/out"
  in_app "$app" "$PATH" node use.mjs
fi
echo "pack-install: ok"
