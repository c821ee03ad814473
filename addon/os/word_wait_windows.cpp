// WaitOnAddress (os/word_wait.h), which stays within one process: Windows regions never ask for a
// shared sleep, since their doorbell's sleepers wait on named events (os/sleeper_event.h).
#if defined(_WIN32)

#include "os/windows_api.h"
#include "os/word_wait.h"

namespace parklock::os {

void wait_on_word(const std::uint32_t* word, std::uint32_t expected,
                  std::chrono::nanoseconds timeout, bool) noexcept {
  WaitOnAddress(const_cast<volatile std::uint32_t*>(word), &expected, sizeof(expected),
                milliseconds_for(timeout));
}

void wake_all_on_word(const std::uint32_t* word, bool) noexcept {
  WakeByAddressAll(const_cast<std::uint32_t*>(word));
}

}  // namespace parklock::os

#endif
