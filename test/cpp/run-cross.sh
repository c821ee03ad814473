#!/usr/bin/env bash
# Builds the C++ core's GoogleTest suite with the pinned zig (scripts/toolchain.js) for another
# target (statically linked on Linux; against msvcrt.dll on Windows), and runs it on this Linux x64 machine:
#   musl     x86_64-linux-musl, natively (the core as the Alpine binaries have it)
#   arm64    aarch64-linux-gnu.2.28, under qemu-user (Debian qemu-user, libc6-arm64-cross)
#   win32    x86_64-windows-gnu, under Wine (Debian wine64)
# GoogleTest comes from the Debian sources (libgtest-dev puts them in /usr/src/googletest).
#   bash test/cpp/run-cross.sh [musl] [arm64] [win32]     (default: all; gtest arguments after --)
set -euo pipefail
cd "$(dirname "$0")/../.."
gtest_src="${GTEST_SOURCE_DIR:-/usr/src/googletest}/googletest"
zig="$(node -p "require('./scripts/toolchain').zig()")"
export ZIG_GLOBAL_CACHE_DIR="$PWD/build/toolchain/zig-cache" ZIG_LOCAL_CACHE_DIR="$PWD/build/toolchain/zig-cache"

targets=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do targets+=("$1"); shift; done
[ "${1:-}" != -- ] || shift
[ "${#targets[@]}" -gt 0 ] || targets=(musl arm64 win32)

build() {
  local zig_target="$1" out="$2"
  shift 2
  mkdir -p "$(dirname "$out")"
  local started=$SECONDS
  "$zig" c++ -target "$zig_target" -O2 -std=c++20 -iquote addon \
    -isystem "$gtest_src/include" -I "$gtest_src" \
    "$gtest_src/src/gtest-all.cc" "$gtest_src/src/gtest_main.cc" addon/*/*.cpp test/cpp/*_test.cpp \
    "$@" -o "$out"
  echo "built $out in $((SECONDS - started)) s"
}

for target in "${targets[@]}"; do
  started=$SECONDS
  case "$target" in
    musl)
      build x86_64-linux-musl build/cross-tests/musl/parklock_tests -static
      build/cross-tests/musl/parklock_tests "$@"
      ;;
    arm64)
      build aarch64-linux-gnu.2.28 build/cross-tests/arm64/parklock_tests -static
      qemu-aarch64 -L /usr/aarch64-linux-gnu build/cross-tests/arm64/parklock_tests "$@"
      ;;
    win32)
      # GoogleTest's iostreams need msvcrt.dll's _create_locale and _free_locale (exported since
      # Windows Vista), which zig 0.11's import library for x64 leaves out.
      mkdir -p build/cross-tests/win32
      printf 'LIBRARY msvcrt.dll\nEXPORTS\n_create_locale\n_free_locale\n' >build/cross-tests/win32/locale.def
      "$zig" dlltool -d build/cross-tests/win32/locale.def -l build/cross-tests/win32/locale.lib -m i386:x86-64
      # WaitOnAddress and WakeByAddressSingle: the API set that Synchronization.lib imports from.
      build x86_64-windows-gnu build/cross-tests/win32/parklock_tests.exe -fno-lto -lapi-ms-win-core-synch-l1-2-0 \
        build/cross-tests/win32/locale.lib
      # Wine's console output is lost unless it goes to a file.
      WINEPREFIX="$PWD/build/platform-tools/wine-prefix" WINEDEBUG=-all \
        /usr/lib/wine/wine64 build/cross-tests/win32/parklock_tests.exe "$@" >build/cross-tests/win32/out.txt 2>&1 ||
        { tail -n 60 build/cross-tests/win32/out.txt; exit 1; }
      tail -n 3 build/cross-tests/win32/out.txt
      ;;
    *) echo "unknown target $target" >&2; exit 2 ;;
  esac
  echo "== $target: passed in $((SECONDS - started)) s"
done
