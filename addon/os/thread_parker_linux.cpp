// The Linux parker: a futex on the parker's word.
#if defined(__linux__)

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lot/thread_parker.h"

namespace parklock {

namespace {

// FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time, which is what steady_clock reads on
// Linux: a sleep cut short by a signal resumes towards the same instant.
void futex_wait_until(std::atomic<std::uint32_t>* word, std::uint32_t expected,
                      Clock::time_point until) {
  timespec when{};
  timespec* timeout = nullptr;
  if (until != Clock::time_point::max()) {
    const auto since_epoch = until.time_since_epoch();
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
    when.tv_sec = static_cast<time_t>(seconds.count());
    when.tv_nsec = static_cast<long>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch - seconds).count());
    timeout = &when;
  }
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT_BITSET_PRIVATE, expected,
          timeout, nullptr, FUTEX_BITSET_MATCH_ANY);
}

void futex_wake_one(std::atomic<std::uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE_PRIVATE, 1, nullptr,
          nullptr, 0);
}

}  // namespace

bool ThreadParker::sleep_until(Clock::time_point until) {
  for (;;) {
    if (woken_.load(std::memory_order_acquire) != 0) return true;
    if (until != Clock::time_point::max() && Clock::now() >= until) return false;
    // Returns on a wake, a timeout, a signal, or at once if the word is already 1.
    futex_wait_until(&woken_, 0, until);
  }
}

void ThreadParker::unpark() noexcept {
  woken_.store(1, std::memory_order_release);
  futex_wake_one(&woken_);
}

}  // namespace parklock

#endif
