#include "thread_parker.h"

#include <algorithm>

#include "interrupt.h"

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

bool ThreadParker::interrupt_requested() {
  const Interrupt* interrupt = current_interrupt();
  return interrupt != nullptr && interrupt->requested();
}

}  // namespace parklock
