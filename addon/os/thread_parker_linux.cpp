// The Linux parker: a futex on the parker's word, and futex_waitv for a sleep that also watches a
// word other processes map.
#if defined(__linux__)

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include "lot/atomic_ref.h"
#include "lot/thread_parker.h"
#include "os/futex_waitv.h"

namespace parklock {

namespace {

// FUTEX_WAIT_BITSET and futex_waitv take an absolute CLOCK_MONOTONIC time, which is what
// steady_clock reads on Linux: a sleep cut short by a signal resumes towards the same instant.
// Null (no timeout) for the end of time.
timespec* absolute_timeout(Clock::time_point until, timespec& when) {
  if (until == Clock::time_point::max()) return nullptr;
  const auto since_epoch = until.time_since_epoch();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
  when.tv_sec = static_cast<time_t>(seconds.count());
  when.tv_nsec = static_cast<long>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch - seconds).count());
  return &when;
}

void futex_wait_until(std::atomic<std::uint32_t>* word, std::uint32_t expected,
                      Clock::time_point until) {
  timespec when{};
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT_BITSET_PRIVATE, expected,
          absolute_timeout(until, when), nullptr, FUTEX_BITSET_MATCH_ANY);
}

// Set once futex_waitv is found missing (a kernel before 5.16): watched sleeps are plain ones.
std::atomic<bool> no_futex_waitv{false};

void futex_wake_one(std::atomic<std::uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE_PRIVATE, 1, nullptr,
          nullptr, 0);
}

}  // namespace

bool ThreadParker::sleep_until(Clock::time_point until) {
  for (;;) {
    if (woken_.load(std::memory_order_acquire) != 0) return true;
    if (until != Clock::time_point::max() && Clock::now() >= until) return false;
    // Returns on a wake, a timeout, a signal, or at once if the word is already 1.
    futex_wait_until(&woken_, 0, until);
  }
}

ThreadParker::Slept ThreadParker::sleep_watching(Clock::time_point until, const std::int32_t* word,
                                                 std::int32_t expected) {
  for (;;) {
    // The parker's own word first, at every turn: whatever a waker handed over wins.
    if (woken_.load(std::memory_order_acquire) != 0) return Slept::kUnparked;
    if (until != Clock::time_point::max() && Clock::now() >= until) return Slept::kTimedOut;
    if (no_futex_waitv.load(std::memory_order_relaxed)) {
      return sleep_until(until) ? Slept::kUnparked : Slept::kTimedOut;
    }
    const cross_process::FutexWaitv words[2] = {
        cross_process::futex_waitv_word(&woken_, 0, /*shared=*/false),
        cross_process::futex_waitv_word(word, expected, /*shared=*/true)};
    timespec when{};
    const long woken =
        syscall(SYS_futex_waitv, words, 2, 0, absolute_timeout(until, when), CLOCK_MONOTONIC);
    if (woken == 1 && woken_.load(std::memory_order_acquire) == 0) return Slept::kWordChanged;
    if (woken < 0 && errno == EAGAIN && woken_.load(std::memory_order_acquire) == 0 &&
        atomic_ref<const std::int32_t>(*word).load(std::memory_order_relaxed) != expected) {
      return Slept::kWordChanged;
    }
    if (woken < 0 && errno == ENOSYS) no_futex_waitv.store(true, std::memory_order_relaxed);
    // 0 (the parker's word), a timeout, a signal, or a word that changed and changed back: the
    // top of the loop tells.
  }
}

void ThreadParker::unpark() noexcept {
  woken_.store(1, std::memory_order_release);
  futex_wake_one(&woken_);
}

}  // namespace parklock

#endif
