// The Windows parker: WaitOnAddress on the parker's word (Windows 8 and later; Node needs 10).
// Chosen over an SRW lock with a condition variable because a hand-off is then one wait and one
// wake on a word, with no lock taken on either side, and unpark() needs no lock to keep the
// parker alive while it notifies (see thread_parker.h, Lifetime).
#if defined(_WIN32)

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include "lot/thread_parker.h"

namespace parklock {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t),
              "WaitOnAddress compares the word's own bytes");

namespace {

// WaitOnAddress takes a relative timeout in whole milliseconds, INFINITE excluded. Rounded up, so
// that a sleep never ends before `until`; the caller re-checks the clock either way.
DWORD milliseconds_until(Clock::time_point until) {
  if (until == Clock::time_point::max()) return INFINITE;
  const auto left = until - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return ms >= static_cast<long long>(INFINITE) ? INFINITE - 1 : static_cast<DWORD>(ms);
}

}  // namespace

bool ThreadParker::sleep_until(Clock::time_point until) {
  for (;;) {
    if (woken_.load(std::memory_order_acquire) != 0) return true;
    const DWORD timeout = milliseconds_until(until);
    if (timeout == 0) return false;
    std::uint32_t parked = 0;
    // Returns on a wake, a timeout, spuriously, or at once if the word no longer reads 0.
    WaitOnAddress(reinterpret_cast<volatile VOID*>(&woken_), &parked, sizeof(parked), timeout);
  }
}

void ThreadParker::unpark() noexcept {
  woken_.store(1, std::memory_order_release);
  WakeByAddressSingle(reinterpret_cast<PVOID>(&woken_));
}

}  // namespace parklock

#endif
