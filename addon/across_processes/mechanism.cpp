#include "across_processes/mechanism.h"

#include <cstdlib>
#include <cstring>

namespace parklock::cross_process {

bool uses_doorbell() noexcept {
#if defined(__APPLE__) || defined(_WIN32)
  return true;
#elif defined(__linux__)
  static const bool portable = [] {
    const char* chosen = std::getenv("PARKLOCK_CROSS_PROCESS");
    return chosen != nullptr && std::strcmp(chosen, "portable") == 0;
  }();
  return portable;
#else
  return false;
#endif
}

}  // namespace parklock::cross_process
