// The Windows parker: WaitOnAddress on the parker's word (Windows 8 and later; Node needs 10).
// Chosen over an SRW lock with a condition variable because a hand-off is then one wait and one
// wake on a word, with no lock taken on either side, and unpark() needs no lock to keep the
// parker alive while it notifies (see thread_parker.h, Lifetime).
#if defined(_WIN32)

#include "lot/thread_parker.h"
#include "os/windows_api.h"

namespace parklock {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t),
              "WaitOnAddress compares the word's own bytes");

namespace {

// WaitOnAddress takes a relative timeout in whole milliseconds, INFINITE excluded. Rounded up, so
// that a sleep never ends before `until`; the caller re-checks the clock either way.
DWORD milliseconds_until(Clock::time_point until) {
  if (until == Clock::time_point::max()) return INFINITE;
  return os::milliseconds_for(until - Clock::now());
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
