// Backing off while another thread is about to release something.
#pragma once

#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace parklock {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// How long a lock's slow path spins before it parks, by the machine's core count. Spinning pays
// only while the holder is running and about to release.
// - Fewer than kManyCores: 10 rounds, 6 of exponential pause, then 4 of yielding the core. With
//   more threads than cores, a longer run of yields (40 rounds before) kept runnable the threads
//   that parking would have taken off the cores the holders needed: 4 and 8 workers hammering one
//   mutex on 2 cores ran about 20-30% slower.
// - kManyCores or more: 16 rounds, 12 of exponential pause, then 4 of yielding. Holders are rarely
//   descheduled there, and a thread that parks costs the next unlock a wake-up: on 16 cores, the
//   C++ core with 2 to 16 threads hammering one mutex did 16-25 M lock+unlock/s with the long
//   spin against 13-18 M with the short one (medians of 3 interleaved runs each). Spinning
//   threads also keep cores from a thread that has other work: there, the main thread's
//   lockAsync() beside 15 busy workers waited longer (99th percentile 1.5-1.8 ms against 0.9),
//   which the hand-off to a passed-over asynchronous waiter (parking_lot.h) more than wins back.
struct SpinPolicy {
  int limit;         // rounds before parking
  int pause_rounds;  // rounds of exponential pause; the rest yield
};

inline constexpr unsigned kManyCores = 8;
inline constexpr SpinPolicy kFewCoresSpin{10, 6};
inline constexpr SpinPolicy kManyCoresSpin{16, 12};

inline const SpinPolicy& spin_policy() noexcept {
  static const SpinPolicy policy =
      std::thread::hardware_concurrency() >= kManyCores ? kManyCoresSpin : kFewCoresSpin;
  return policy;
}

// The rounds a condition variable's waiter woken to re-acquire its mutex spins: the notifier holds
// the mutex and is about to release it, or one of the waiters woken with it is (notify_all() keeps
// a few wake-ups under way that way), so a wake-up is worth a longer wait than plain contention.
inline constexpr int kNotifiedSpinLimit = 40;

// Round `round` of a spin: exponentially longer pauses, then yielding the core, which matters on a
// machine with fewer cores than spinning threads.
inline void spin_pause(int round) noexcept {
  if (round < spin_policy().pause_rounds) {
    for (int i = 0; i < (1 << round); ++i) cpu_relax();
  } else {
    std::this_thread::yield();
  }
}

}  // namespace parklock
