#!/usr/bin/env bash
# Builds the C++ core and its GoogleTest suite with clang and libc++ in build/libcxx and runs it,
# so that the core stays portable beyond g++ and libstdc++ (macOS and some Linux distributions
# ship only clang and libc++). GoogleTest is built from the Debian sources (libgtest-dev puts them
# in /usr/src/googletest) with libc++ too, since the packaged library is linked against libstdc++.
# Then the addon is built the same way and the JavaScript suite runs against it.
# Extra arguments go to ctest.
set -euo pipefail

cd "$(dirname "$0")/../.."
build_dir="${PARKLOCK_LIBCXX_BUILD_DIR:-build/libcxx}"
jobs="${PARKLOCK_JOBS:-2}"
gtest_src="${GTEST_SOURCE_DIR:-/usr/src/googletest}"
export CXX="${CXX:-clang++}" CC="${CC:-clang}"
flags=(-DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_CXX_FLAGS=-stdlib=libc++
  -DCMAKE_EXE_LINKER_FLAGS=-stdlib=libc++ -DCMAKE_SHARED_LINKER_FLAGS=-stdlib=libc++)

if [ ! -f "$build_dir/gtest/lib/cmake/GTest/GTestConfig.cmake" ]; then
  cmake -S "$gtest_src" -B "$build_dir/gtest-build" "${flags[@]}" -DCMAKE_C_COMPILER="$CC" \
    -DBUILD_GMOCK=OFF \
    -DCMAKE_INSTALL_PREFIX="$PWD/$build_dir/gtest" -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build_dir/gtest-build" -j "$jobs"
  cmake --install "$build_dir/gtest-build"
fi

cmake -S . -B "$build_dir/parklock" "${flags[@]}" -DPARKLOCK_TESTS=ON \
  -DCMAKE_PREFIX_PATH="$PWD/$build_dir/gtest"
cmake --build "$build_dir/parklock" -j "$jobs"
(cd "$build_dir/parklock" && ctest --output-on-failure "$@")

node node_modules/cmake-js/bin/cmake-js compile --out "$build_dir/addon" \
  --CDCMAKE_CXX_COMPILER="$CXX" --CDCMAKE_CXX_FLAGS=-stdlib=libc++ \
  --CDCMAKE_SHARED_LINKER_FLAGS=-stdlib=libc++
PARKLOCK_NATIVE_PATH="$PWD/$build_dir/addon/Release/parklock.node" npm run test:js
