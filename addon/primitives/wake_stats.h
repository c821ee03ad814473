// How blocked mutex waiters fare after a wake-up, counted per thread by the thread that was woken:
// the benchmarks (bench/cpp, and bench/ through the addon's wakeStats()) report these next to
// their times.
//
// A wake-up is futile when the woken thread finds the lock taken and parks on it again: it paid
// for a sleep and a wake-up and got nothing. That is the number requeueing and spinning exist to
// keep low.
//
// The counters are plain thread-locals, always on: each is touched only by its own thread, only on
// a path that has just come back from parking, where one increment is lost in the cost of the
// wake-up.
#pragma once

#include <cstdint>

namespace parklock::wake_stats {

enum class Event {
  kWoken,     // a thread woken to acquire a mutex (notified, or by a release) competes for it
  kFutile,    // a woken thread parked on the mutex again before it acquired it
  kHandedOff  // a waiter was woken already holding the mutex
};

struct Counts {
  std::uint64_t woken = 0;
  std::uint64_t futile = 0;
  std::uint64_t handed_off = 0;
};

namespace detail {
inline thread_local Counts counts;
}  // namespace detail

inline void record(Event event) noexcept {
  switch (event) {
    case Event::kWoken:
      ++detail::counts.woken;
      break;
    case Event::kFutile:
      ++detail::counts.futile;
      break;
    case Event::kHandedOff:
      ++detail::counts.handed_off;
      break;
  }
}

// The calling thread's counts since it started.
inline Counts snapshot() noexcept {
  return detail::counts;
}

}  // namespace parklock::wake_stats
