// A strictly FIFO counting semaphore in one 32-bit word of caller-owned (possibly shared) memory.
//
// Shared-memory layout (kBytes = 4, kAlign = 4; zero is a semaphore with no permits and no
// waiters):
//
//   bits   field    meaning                                   written by
//   -----  -------  ----------------------------------------  ------------------------------------
//   0..29  permits  permits available now, 0..kMaxPermits     anyone: CAS while bit 31 is clear;
//                                                             under the bucket lock while it is set
//   30     (none)   always 0: a word with it set is corrupt    never
//   31     waiters  waiters are queued (kWaitersBit): permits  set by a waiter under the bucket
//   lock
//                   may only be taken under the bucket lock,   just before it queues; cleared under
//                   oldest waiter first                        it when the queue is found empty
//
// Invariants
// - The waiters bit is set exactly while a waiter is queued on the word (as seen under the bucket
//   lock): a waiter that leaves without a grant runs the grant step below in the critical section
//   of its departure, which clears the bit when the queue is empty.
// - While the bit is set, nobody takes permits without the bucket lock: the fast paths (here and
//   in lib/semaphore.js) only compare-and-swap from a word without it. So a newcomer can never
//   barge past a queued request, and a large request at the head is never starved by small ones.
//
// Acquire n (a) CAS permits -> permits - n if the bit is clear and permits >= n: the fast path.
// Otherwise (b) park with request n, validating under the bucket lock: take the permits if (a)
// now holds, else set the bit and queue. A woken waiter never competes again: the permits were
// transferred to it (kGranted).
//
// Release n (a) CAS permits -> permits + n while the bit is clear: the fast path. Otherwise (b)
// under the bucket lock add n and run the grant step: walk the queue oldest first, subtracting each
// waiter's request from the permits and waking it with kGranted, until a request does not fit; if
// the queue is then empty, clear the bit. A waiter that leaves the queue without a grant (timeout,
// cancel, interrupt) runs the grant step too, with nothing added and under the same lock as its
// departure (parking_lot::Grant), since its request may have been what blocked the smaller ones
// behind it.
//
// A waiter that received kGranted but no longer wants the permits (its wait was cancelled while
// the grant was on its way, its thread is gone) releases them again: abandon_wake().
//
// JavaScript runs both fast paths itself with Atomics on the same word (lib/semaphore.js), using
// the layout constants the binding exports.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "atomic_ref.h"
#include "deadline.h"
#include "function_ref.h"
#include "parking_lot.h"
#include "wait_step.h"

namespace parklock {

class SemaphoreWord {
 public:
  // Layout constants, exported to JavaScript by the binding.
  static constexpr std::size_t kWordCount = 1;
  static constexpr std::size_t kBytes = kWordCount * sizeof(std::int32_t);
  static constexpr std::size_t kAlign = alignof(std::int32_t);
  static constexpr std::int32_t kWaitersBit = std::numeric_limits<std::int32_t>::min();  // bit 31
  static constexpr std::int32_t kReservedBit = std::int32_t{1} << 30;
  static constexpr std::int32_t kPermitsMask = kReservedBit - 1;
  // The most permits a word holds, and the largest request or release.
  static constexpr std::int32_t kMaxPermits = kPermitsMask;

  // The token a queued waiter is woken with.
  enum Wake : WakeToken {
    kGranted = 4 * kTokenSpaceSize,  // the requested permits are now yours
  };

  enum class ReleaseStatus { kReleased, kOverflow, kCorrupt, kBadCount };

  static constexpr std::int32_t permits_of(std::int32_t word) noexcept {
    return word & kPermitsMask;
  }
  static constexpr bool has_waiters(std::int32_t word) noexcept {
    return (word & kWaitersBit) != 0;
  }
  static constexpr bool is_corrupt(std::int32_t word) noexcept {
    return (word & kReservedBit) != 0;
  }
  // Whether `n` is a possible request or release: 1..kMaxPermits.
  static constexpr bool valid_count(std::int64_t n) noexcept { return n >= 1 && n <= kMaxPermits; }

  explicit SemaphoreWord(std::int32_t* word) noexcept : word_(word) {}

  // Takes `n` permits if nobody is queued and enough are available; never waits.
  bool try_acquire(std::int32_t n) noexcept {
    if (!valid_count(n)) return false;
    std::int32_t seen = word().load(std::memory_order_relaxed);
    while (!has_waiters(seen) && !is_corrupt(seen) && permits_of(seen) >= n) {
      if (word().compare_exchange_weak(seen, seen - n, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
        return true;
      }
    }
    return false;
  }

  // kAcquired, kTimedOut, kInterrupted (the thread's interrupt, interrupt.h), kCorrupt. A count
  // that is not valid_count() is refused as kCorrupt without touching the word: callers check
  // counts first (Semaphore throws, the binding throws a RangeError).
  Outcome acquire(std::int32_t n, Deadline deadline = Deadline::never()) {
    if (try_acquire(n)) return Outcome::kAcquired;
    return acquire_slow(n, deadline);
  }

  ReleaseStatus release(std::int32_t n) noexcept {
    if (valid_count(n)) {
      std::int32_t seen = word().load(std::memory_order_relaxed);
      while (!has_waiters(seen) && !is_corrupt(seen) && permits_of(seen) <= kMaxPermits - n) {
        if (word().compare_exchange_weak(seen, seen + n, std::memory_order_release,
                                         std::memory_order_relaxed)) {
          return ReleaseStatus::kReleased;
        }
      }
    }
    return release_slow(n);
  }

  // The contended part of acquire(): wait_blocking() of an AcquireStep.
  Outcome acquire_slow(std::int32_t n, Deadline deadline);

  // The contended part of release(): adds the permits and grants them to the queued waiters.
  ReleaseStatus release_slow(std::int32_t n) noexcept;

  // The acquire protocol, one step, for `waiter.request()` permits: takes them now (kAcquired),
  // or queues `waiter` (its wake-up token is one of Wake) and returns kPending; kTimedOut if
  // they are not available and `deadline` has passed (it never queues then); kCorrupt. Never
  // blocks.
  Outcome acquire_or_enqueue(Waiter& waiter, Deadline deadline = Deadline::never());

  // An acquire as a WaitStep (wait_step.h), blocking or Promise.
  class AcquireStep;

  // A waiter that asked for `request` permits and received `token` but no longer wants them
  // (cancelled, its thread is gone) releases them, so that the next waiters get them.
  void abandon_wake(std::int64_t request, WakeToken token) noexcept;

  // Takes a queued asynchronous waiter out of the queue (false if its grant is already on its
  // way), running the grant step in the same critical section: its request may have been
  // blocking the smaller ones behind it, and the queue may now be empty.
  bool cancel(Waiter& waiter, parking_lot::Wakeups* deferred = nullptr) noexcept;

  std::int32_t available() const noexcept {
    return permits_of(word().load(std::memory_order_relaxed));
  }
  bool waiters_queued() const noexcept {
    return has_waiters(word().load(std::memory_order_relaxed));
  }
  const void* address() const noexcept { return word_; }
  // The site of semaphore waiters (parking_lot.h).
  static const WaitSite kWaitSite;

 private:
  atomic_ref<std::int32_t> word() const noexcept { return atomic_ref<std::int32_t>(*word_); }

  // What a would-be waiter does with the word under the bucket lock.
  enum class Claim { kTaken, kQueue, kWouldBlock, kCorrupt };
  Claim take_or_announce(std::int32_t n, bool may_queue) noexcept;

  // Under the bucket lock: subtracts `request` for a queued waiter if that many are available.
  bool take_for_waiter(std::int64_t request) noexcept;

  // Adds `n` (0: none) and runs the grant step, all under the bucket lock.
  ReleaseStatus add_and_grant(std::int32_t n) noexcept;
  // The grant step of add_and_grant(), handed to `run`, which must run it under the bucket lock
  // at most once; `*status` is what it found.
  void with_grant_step(std::int32_t n, ReleaseStatus* status,
                       FunctionRef<void(const parking_lot::Grant&)> run) noexcept;

  std::int32_t* word_;
};

class SemaphoreWord::AcquireStep final : public WaitStep {
 public:
  AcquireStep(SemaphoreWord semaphore, std::int32_t n) noexcept : semaphore_(semaphore), n_(n) {}
  std::int64_t request() const override { return n_; }
  Outcome start(Waiter& waiter) override;
  Outcome resume(Waiter& waiter, WakeToken token) override;
  void abandon(Waiter& waiter, WakeToken token) noexcept override;
  // Leaving without a grant may unblock the waiters queued behind this one.
  bool cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept override;

 private:
  SemaphoreWord semaphore_;
  const std::int32_t n_;
};

// A self-contained counting semaphore for C++ code, built on SemaphoreWord.
class Semaphore {
 public:
  // Throws std::invalid_argument unless 0 <= initial_permits <= kMaxPermits.
  explicit Semaphore(std::int32_t initial_permits = 0);
  Semaphore(const Semaphore&) = delete;
  Semaphore& operator=(const Semaphore&) = delete;

  // Blocks until `n` permits are granted. Throws std::invalid_argument for a bad count.
  void acquire(std::int32_t n = 1);
  bool try_acquire(std::int32_t n = 1) noexcept { return word().try_acquire(n); }
  template <typename Rep, typename Period>
  bool try_acquire_for(std::chrono::duration<Rep, Period> timeout, std::int32_t n = 1) {
    return word().acquire(n, Deadline::at(Clock::now() + timeout)) == Outcome::kAcquired;
  }
  // Throws std::invalid_argument for a bad count and std::overflow_error if the permits would
  // exceed kMaxPermits (nothing is released then).
  void release(std::int32_t n = 1);
  std::int32_t available() const noexcept { return SemaphoreWord(&word_).available(); }

 private:
  SemaphoreWord word() noexcept { return SemaphoreWord(&word_); }
  // Mutable: available() reads it atomically, which is logically const.
  alignas(SemaphoreWord::kAlign) mutable std::int32_t word_;
};

}  // namespace parklock
