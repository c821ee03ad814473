// The Windows half of sleeping_child.h: this test binary, started with PARKLOCK_TEST_SLEEP set,
// sleeps until it is killed, before GoogleTest runs anything.
#if defined(_WIN32)
#include "os/windows_api.h"

namespace {

const bool sleeps_if_asked = [] {
  if (GetEnvironmentVariableW(L"PARKLOCK_TEST_SLEEP", nullptr, 0) != 0) {
    for (;;) Sleep(INFINITE);
  }
  return false;
}();

}  // namespace

#endif
