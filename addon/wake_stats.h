// How blocked mutex waiters fare after a wake-up, for the benchmarks (bench/cpp): compiled in
// only where PARKLOCK_WAKE_STATS is defined (a separate build of the core that only the benchmark
// programs link); everywhere else record() is an empty inline function and costs nothing.
//
// A wake-up is futile when the woken thread finds the lock taken and parks on it again: it paid
// for a sleep and a wake-up and got nothing. That is the number requeueing and spinning exist to
// keep low, so the benchmarks report it next to the times.
#pragma once

#include <cstdint>

#ifdef PARKLOCK_WAKE_STATS
#include <atomic>
#endif

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

#ifdef PARKLOCK_WAKE_STATS
namespace detail {
inline std::atomic<std::uint64_t> woken{0};
inline std::atomic<std::uint64_t> futile{0};
inline std::atomic<std::uint64_t> handed_off{0};
}  // namespace detail

inline void record(Event event) noexcept {
  switch (event) {
    case Event::kWoken:
      detail::woken.fetch_add(1, std::memory_order_relaxed);
      break;
    case Event::kFutile:
      detail::futile.fetch_add(1, std::memory_order_relaxed);
      break;
    case Event::kHandedOff:
      detail::handed_off.fetch_add(1, std::memory_order_relaxed);
      break;
  }
}

inline Counts snapshot() noexcept {
  return {detail::woken.load(std::memory_order_relaxed),
          detail::futile.load(std::memory_order_relaxed),
          detail::handed_off.load(std::memory_order_relaxed)};
}

inline constexpr bool kEnabled = true;
#else
inline void record(Event) noexcept {}
inline Counts snapshot() noexcept {
  return {};
}
inline constexpr bool kEnabled = false;
#endif

}  // namespace parklock::wake_stats
