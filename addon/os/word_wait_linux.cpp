// The futex (os/word_wait.h): private where no other process maps the word, which saves the
// kernel looking up the page's file.
#if defined(__linux__)

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

#include "os/word_wait.h"

namespace parklock::os {

void wait_on_word(const std::uint32_t* word, std::uint32_t expected,
                  std::chrono::nanoseconds timeout, bool shared) noexcept {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  timespec relative{};
  relative.tv_sec = static_cast<time_t>(seconds.count());
  relative.tv_nsec = static_cast<long>((timeout - seconds).count());
  syscall(SYS_futex, word, shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, expected, &relative, nullptr,
          0);
}

void wake_all_on_word(const std::uint32_t* word, bool shared) noexcept {
  syscall(SYS_futex, word, shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace parklock::os

#endif
