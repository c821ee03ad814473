#!/usr/bin/env bash
# Checks the packed package as its consumers' tools see it: @arethetypeswrong/cli (every module
# resolution), publint --strict, and tsc --strict on samples using every export, under node16,
# nodenext and bundler resolution, with the oldest supported TypeScript (5.2), the newest 5.x and
# TypeScript 7. No @types packages are installed, so the declarations must stand on their own.
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/package/tools.sh

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
npm pack --ignore-scripts --silent --pack-destination "$work" >/dev/null
tarball="$(echo "$work"/parklock-*.tgz)"
bin="$tools/node_modules/.bin"

echo "== attw"
"$bin/attw" "$tarball"
echo "== publint --strict"
"$bin/publint" --strict

mkdir -p "$work/app/node_modules/parklock"
tar xzf "$tarball" -C "$work/app/node_modules/parklock" --strip-components=1
cp test/package/types/sample.mts test/package/types/sample.cts "$work/app/"

for ts in ts52 ts5 ts7; do
  tsc="$tools/node_modules/$ts/bin/tsc"
  for resolution in node16 nodenext bundler; do
    module="$resolution"
    files='"sample.mts", "sample.cts"'
    if [ "$resolution" = bundler ]; then
      module=esnext
      files='"sample.mts"'
    fi
    cat >"$work/app/tsconfig.json" <<JSON
{
  "compilerOptions": {
    "strict": true,
    "noEmit": true,
    "target": "es2022",
    "module": "$module",
    "moduleResolution": "$resolution"
  },
  "files": [$files]
}
JSON
    printf '%-6s %-9s ' "$ts" "$resolution"
    (cd "$work/app" && node "$tsc" --version && node "$tsc" -p tsconfig.json)
  done
done
echo "types: ok"
