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

// How many rounds a lock's slow path spins before it parks. Spinning pays only while the holder
// is running and about to release; 40 rounds of exponential pause (then yield) cover a short
// critical section without burning a core on a long one.
inline constexpr int kSpinLimit = 40;

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
