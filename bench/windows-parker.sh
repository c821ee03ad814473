#!/usr/bin/env bash
# Builds bench/cpp/windows_parker_bench.cpp for Windows x64 with the pinned zig and runs it under
# Wine (Debian wine64). Numbers under Wine measure Wine's implementation of both, not Windows';
# run the .exe on Windows for those.
#   bash bench/windows-parker.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
zig="$(node -p "require('./scripts/toolchain').zig()")"
export ZIG_GLOBAL_CACHE_DIR="$PWD/build/toolchain/zig-cache" ZIG_LOCAL_CACHE_DIR="$PWD/build/toolchain/zig-cache"
out=build/bench/windows_parker_bench.exe
mkdir -p build/bench
"$zig" c++ -target x86_64-windows-gnu -O2 -std=c++20 bench/cpp/windows_parker_bench.cpp \
  -lapi-ms-win-core-synch-l1-2-0 -o "$out"
WINEPREFIX="$PWD/build/platform-tools/wine-prefix" WINEDEBUG=-all \
  /usr/lib/wine/wine64 "$out" "${1:-20000}" >build/bench/windows_parker.txt 2>&1
cat build/bench/windows_parker.txt
