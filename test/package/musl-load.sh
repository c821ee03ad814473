#!/usr/bin/env bash
# Loads prebuilds/linux-x64-musl/parklock.node into a program linked against musl (Debian's
# musl-tools; no musl build of Node is on the npm registry): a stand-in for node that exports every
# Node-API function as a stub, so that musl's loader, which binds every symbol at load, can map
# the addon, run its initialisers and find its entry point. It checks the binary's linkage on a
# real musl loader, not the addon's behaviour (prebuild.yml runs the suite on Alpine).
set -euo pipefail
cd "$(dirname "$0")/../.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
def="$(node -p "require('path').join(require('path').dirname(require.resolve('node-api-headers/package.json')), 'def', 'node_api.def')")"
# One stub per exported Node-API name (the EXPORTS lines of the .def file); none is ever called.
{
  echo '#include <stdlib.h>'
  grep -E '^(napi_|node_api_)' "$def" | while read -r name; do echo "void $name(void) { abort(); }"; done
} >"$work/stubs.c"
cat >"$work/host.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char** argv) {
  void* addon = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!addon) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 1; }
  void* entry = dlsym(addon, "napi_register_module_v1");
  printf("loaded %s under musl; napi_register_module_v1 %s\n", argv[1], entry ? "found" : "MISSING");
  return entry ? 0 : 1;
}
C
musl-gcc -rdynamic -o "$work/host" "$work/host.c" "$work/stubs.c"
"$work/host" "$PWD/prebuilds/linux-x64-musl/parklock.node"
