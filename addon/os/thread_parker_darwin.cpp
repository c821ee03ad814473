// The macOS parker: __ulock_wait/__ulock_wake on the parker's word. They are libSystem's (macOS
// 10.12 and later; Node needs 10.15), not in its public headers, but they are what libc++'s
// std::atomic::wait uses on macOS, so Apple keeps them; os_sync_wait_on_address, their public
// successor, only exists from macOS 14.4.
#if defined(__APPLE__)

#include <cstdint>

#include "lot/thread_parker.h"

extern "C" int __ulock_wait(std::uint32_t operation, void* address, std::uint64_t value,
                            std::uint32_t timeout_us);
extern "C" int __ulock_wake(std::uint32_t operation, void* address, std::uint64_t wake_value);

namespace parklock {

namespace {

constexpr std::uint32_t kCompareAndWait = 1;    // UL_COMPARE_AND_WAIT: a 32-bit word
constexpr std::uint32_t kNoErrno = 0x01000000;  // ULF_NO_ERRNO: errors come back negated

// __ulock_wait takes a relative timeout in microseconds, where 0 means none. Rounded up, so that
// a sleep never ends before `until`; the caller re-checks the clock either way.
std::uint32_t microseconds_until(Clock::time_point until, bool& expired) {
  expired = false;
  if (until == Clock::time_point::max()) return 0;
  const auto left = until - Clock::now();
  if (left <= Clock::duration::zero()) {
    expired = true;
    return 0;
  }
  const auto us = std::chrono::ceil<std::chrono::microseconds>(left).count();
  return us >= 0xffffffffLL ? 0xffffffffU : static_cast<std::uint32_t>(us);
}

}  // namespace

bool ThreadParker::sleep_until(Clock::time_point until) {
  for (;;) {
    if (woken_.load(std::memory_order_acquire) != 0) return true;
    bool expired = false;
    const std::uint32_t timeout = microseconds_until(until, expired);
    if (expired) return false;
    // Returns on a wake, a timeout, an interruption, or at once if the word no longer reads 0.
    __ulock_wait(kCompareAndWait | kNoErrno, &woken_, 0, timeout);
  }
}

void ThreadParker::unpark() noexcept {
  woken_.store(1, std::memory_order_release);
  __ulock_wake(kCompareAndWait | kNoErrno, &woken_, 0);
}

}  // namespace parklock

#endif
