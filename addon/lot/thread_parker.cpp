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

ThreadParker::WatchedWake ThreadParker::park_watching(Deadline deadline, const std::int32_t* word,
                                                      std::int32_t expected) {
  const Interrupt* interrupt = current_interrupt();
  for (;;) {
    Clock::time_point until = deadline.when();
    if (interrupt != nullptr) until = std::min(until, Clock::now() + interrupt->poll_interval);
    const Slept slept = sleep_watching(until, word, expected);
    if (slept == Slept::kUnparked) return WatchedWake::kUnparked;
    // Asked at every change too: a word that keeps changing must not keep a thread that is being
    // stopped from hearing it.
    if (interrupt != nullptr && interrupt->requested()) return WatchedWake::kInterrupted;
    if (deadline.expired()) return WatchedWake::kTimedOut;
    if (slept == Slept::kWordChanged) return WatchedWake::kWordChanged;
  }
}

#if !defined(__linux__)
ThreadParker::Slept ThreadParker::sleep_watching(Clock::time_point until, const std::int32_t*,
                                                 std::int32_t) {
  return sleep_until(until) ? Slept::kUnparked : Slept::kTimedOut;
}
#endif

void ThreadParker::park_until_unparked() {
  sleep_until(Clock::time_point::max());
}

void ThreadParker::unpark_self() noexcept {
  set_woken(true, std::memory_order_release);
}

void ThreadParker::rearm() noexcept {
  set_woken(false, std::memory_order_relaxed);
}

void ThreadParker::set_woken(bool woken, std::memory_order order) noexcept {
#if defined(PARKLOCK_PARKER_WORD)
  woken_.store(woken ? 1 : 0, order);
#else
  (void)order;
  const std::lock_guard<std::mutex> guard(lock_);
  woken_ = woken;
#endif
}

bool ThreadParker::interrupt_requested() {
  const Interrupt* interrupt = current_interrupt();
  return interrupt != nullptr && interrupt->requested();
}

}  // namespace parklock
