#!/usr/bin/env bash
# Builds the C++ core and its GoogleTest suite with ThreadSanitizer in build/tsan and runs it.
# Extra arguments go to ctest (for example -R Mutex or --repeat until-fail:20).
#
# g++-12's TSAN runtime expects the address-space layout of older kernels. Where the kernel
# randomizes mmap with more entropy (vm.mmap_rnd_bits above 28, as on recent Ubuntu CI runners), it
# aborts at startup with "FATAL: ThreadSanitizer: unexpected memory mapping". Disabling address
# randomization for this process tree with `setarch -R` avoids that. The build runs under it too,
# because gtest_discover_tests executes the instrumented test binary at build time to list tests.
set -euo pipefail

cd "$(dirname "$0")/../.."
build_dir="${PARKLOCK_TSAN_BUILD_DIR:-build/tsan}"
jobs="${PARKLOCK_JOBS:-2}"

launcher=()
if setarch "$(uname -m)" -R true 2>/dev/null; then
  launcher=(setarch "$(uname -m)" -R)
else
  # Some container seccomp profiles refuse the personality change; TSAN may still work as is.
  echo "run-tsan.sh: 'setarch -R' is not permitted here; running with address randomization on" >&2
fi

# A race report makes the test process exit non-zero (TSAN's exitcode, 66), so ctest fails it.
export TSAN_OPTIONS="second_deadlock_stack=1 ${TSAN_OPTIONS:-}"

cmake -S . -B "$build_dir" -DPARKLOCK_TESTS=ON -DPARKLOCK_SANITIZE=thread
"${launcher[@]}" cmake --build "$build_dir" -j "$jobs"
cd "$build_dir"
"${launcher[@]}" ctest --output-on-failure "$@"
