// The parker where the OS offers no wait on a word: a mutex and a condition variable.
#include "lot/thread_parker.h"

#if !defined(PARKLOCK_PARKER_WORD)

namespace parklock {

bool ThreadParker::sleep_until(Clock::time_point until) {
  std::unique_lock<std::mutex> guard(lock_);
  if (until == Clock::time_point::max()) {
    wake_.wait(guard, [this] { return woken_; });
    return true;
  }
  return wake_.wait_until(guard, until, [this] { return woken_; });
}

void ThreadParker::unpark() noexcept {
  // Notified under the lock: the parked thread cannot see woken_ and destroy the parker before
  // this call is done with it.
  std::lock_guard<std::mutex> guard(lock_);
  woken_ = true;
  wake_.notify_one();
}

}  // namespace parklock

#endif
