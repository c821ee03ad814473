#include "lot/thread_parker.h"

#include <algorithm>

#include "lot/interrupt.h"

namespace parklock {

ThreadParker::Wake ThreadParker::park(Deadline deadline) {
  const Interrupt* interrupt = current_interrupt();
  for (;;) {
    Clock::time_point until = deadline.when();
    if (interrupt != nullptr) until = std::min(until, Clock::now() + interrupt->poll_interval);
    if (sleep_until(until)) return Wake::kUnparked;
    if (interrupt != nullptr && interrupt->requested()) return Wake::kInterrupted;
    if (deadline.expired()) return Wake::kTimedOut;
  }
}

void ThreadParker::park_until_unparked() {
  sleep_until(Clock::time_point::max());
}

void ThreadParker::rearm() noexcept {
#if defined(PARKLOCK_PARKER_WORD)
  woken_.store(0, std::memory_order_relaxed);
#else
  const std::lock_guard<std::mutex> guard(lock_);
  woken_ = false;
#endif
}

bool ThreadParker::interrupt_requested() {
  const Interrupt* interrupt = current_interrupt();
  return interrupt != nullptr && interrupt->requested();
}

}  // namespace parklock
