// How one thread sleeps in the parking lot until a waker lets it go.
//
// The parking lot decides who waits for what; the parker only makes the calling thread sleep and
// wake. Where the OS can sleep on a word (Linux futex, Windows WaitOnAddress, macOS __ulock_wait)
// it is one 32-bit word: unpark() stores "woken" and wakes one sleeper on it, park() sleeps while
// the word still reads "parked", so a hand-off costs one system call on each side. Elsewhere it
// is a mutex and a condition variable. One file per OS (os/thread_parker_<os>.cpp) supplies
// sleep_until() and unpark(); the rest is here and in thread_parker.cpp.
//
// Interrupts (interrupt.h) are polled here and nowhere else: a sleep with an interrupt open is cut
// into slices of its poll interval, and each slice ends by asking it.
//
// Lifetime: the parked thread may return (and destroy the parker) as soon as it sees the woken
// state. unpark() touches the parker after that store only through the wake call on its address,
// which at worst wakes some later sleeper on the same address spuriously; every sleeper re-checks
// its own word, so that is harmless. (Both WakeByAddressSingle and __ulock_wake accept an address
// whose memory was freed or reused: they only look it up in the kernel's wait table.)
#pragma once

#include <atomic>
#include <cstdint>

#include "lot/deadline.h"

#if defined(__linux__) || defined(_WIN32) || defined(__APPLE__)
#define PARKLOCK_PARKER_WORD 1
#else
#include <condition_variable>
#include <mutex>
#endif

namespace parklock {

class ThreadParker {
 public:
  enum class Wake { kUnparked, kTimedOut, kInterrupted };

  ThreadParker() = default;
  ThreadParker(const ThreadParker&) = delete;
  ThreadParker& operator=(const ThreadParker&) = delete;

  // Sleeps until unpark(), the deadline, or the calling thread's interrupt. kUnparked wins over
  // the other two when they coincide: whatever the waker handed over must not be dropped.
  Wake park(Deadline deadline);

  // What park_watching() ended by.
  enum class WatchedWake { kUnparked, kTimedOut, kInterrupted, kWordChanged };

  // As park(), and also ends when the 32-bit `word`, which other processes may map, is woken or
  // reads otherwise than `expected` (kWordChanged, once the deadline and the interrupt have been
  // asked). Only where the OS sleeps on two words at once (Linux 5.16's futex_waitv); elsewhere,
  // and on an older kernel, as park().
  WatchedWake park_watching(Deadline deadline, const std::int32_t* word, std::int32_t expected);

  // Sleeps until unpark(); no deadline and no interrupt (a waker has already committed to it).
  void park_until_unparked();

  // Any thread, once per park: lets the parked thread go.
  void unpark() noexcept;
  // unpark() by the parked thread itself, awake between two sleeps: no wake-up to send.
  void unpark_self() noexcept;
  // The parked thread, after it saw unpark(): makes the parker ready for the next park.
  void rearm() noexcept;

  // Whether the calling thread's current interrupt (if any) asks it to give up, polled now.
  static bool interrupt_requested();

 private:
  // Sleeps until unpark() or `until`; true if unparked.
  bool sleep_until(Clock::time_point until);
  // Marks the parker woken or not, from the parked thread itself, which needs no wake-up sent.
  void set_woken(bool woken, std::memory_order order) noexcept;

  enum class Slept { kUnparked, kTimedOut, kWordChanged };
  // Sleeps until unpark(), `until`, or a change of `word` from `expected` (park_watching()).
  Slept sleep_watching(Clock::time_point until, const std::int32_t* word, std::int32_t expected);

#if defined(PARKLOCK_PARKER_WORD)
  std::atomic<std::uint32_t> woken_{0};  // 0 parked, 1 woken
#else
  std::mutex lock_;
  std::condition_variable wake_;
  bool woken_ = false;  // guarded by lock_
#endif
};

}  // namespace parklock
