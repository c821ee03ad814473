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

// How many rounds a lock's slow path spins before it parks: 6 rounds of exponential pause, then 4
// of yielding the core. Spinning pays only while the holder is running and about to release; with
// more threads than cores, a longer run of yields (40 rounds before) kept runnable the threads that
// parking would have taken off the cores the holders needed: 4 and 8 workers hammering one mutex
// on 2 cores ran about 20-30% slower.
inline constexpr int kSpinLimit = 10;

// The same for a condition variable's waiter woken to re-acquire its mutex: the notifier holds
// the mutex and is about to release it, or one of the waiters woken with it is (notify_all() keeps
// a few wake-ups under way that way), so a wake-up is worth a longer wait than plain contention.
inline constexpr int kNotifiedSpinLimit = 40;

// Round `round` of a spin: exponentially longer pauses, then yielding the core, which matters on a
// machine with fewer cores than spinning threads.
inline void spin_pause(int round) noexcept {
  if (round < 6) {
    for (int i = 0; i < (1 << round); ++i) cpu_relax();
  } else {
    std::this_thread::yield();
  }
}

}  // namespace parklock
