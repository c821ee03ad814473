// An eventually fair counting semaphore in one 32-bit word of caller-owned (possibly shared)
// memory.
//
// Shared-memory layout (kBytes = 4, kAlign = 4; zero is a semaphore with no permits and no
// waiters):
//
//   bits   field     meaning                                  written by
//   -----  --------  ---------------------------------------  ------------------------------------
//   0..29  permits   permits available now, 0..kMaxPermits    anyone, by CAS (the fast paths only
//                                                             while bit 30 is clear)
//   30     hand-off  the permits are set aside for the        under the bucket lock, by the grant
//                    queued waiters, oldest first             step; only while bit 31 is set: a
//                    (kHandOffBit): nobody else takes them    word with 30 but not 31 is corrupt
//   31     waiters   waiters are queued (kWaitersBit):        set by a waiter under the bucket lock
//                    every release takes the slow path        just before it queues; cleared (with
//                                                             30) under it when the queue is empty
//
// Invariants
// - The waiters bit is set exactly while a waiter is queued on the word (as seen under the bucket
//   lock): a waiter that leaves without a wake-up runs the grant step below in the critical
//   section of its departure, which clears the bit when the queue is empty. A release never
//   clears it while waiters remain, so unlike the mutex (whose free word cannot say "waiters")
//   a waiter woken to compete owes nothing: if it loses, it queues again and the bit is still set.
// - Every permit taken while waiters are queued is given back through the slow path, which runs
//   the grant step: free permits never sit idle while the head's request fits, without some
//   thread on its way to take them.
//
// Acquire n (a) CAS permits -> permits - n if bit 30 is clear and permits >= n: the fast path,
// taken even while waiters are queued (barging, which is what makes a contended semaphore fast).
// Otherwise a blocking waiter spins a few rounds (spin.h) retrying (a) while bit 31 is clear, then
// (b) queues with request n, validating under the bucket lock: take the permits if (a) now holds,
// else set bit 31 and queue at the back.
//
// Release n (a) CAS permits -> permits + n while bit 31 is clear: the fast path. Otherwise (b)
// under the bucket lock add n and run the grant step over the queue, oldest first:
//   - usually the permits stay in the word and the waiters whose requests they cover are woken to
//     COMPETE for them with running threads (kCompete); one that loses queues again at the back;
//   - when the parking lot says it is time to be fair (UnparkInfo::be_fair: a randomized timer per
//     bucket, due about once per millisecond of contention, and at once for an asynchronous
//     waiter that lost the race it was last woken for), or while bit 30 is set, the permits are
//     HANDED to the waiters directly (kGranted), taken out of the word, while the head's whole
//     request fits. A fair turn then sets bit 30 if waiters remain, and it stays set until a
//     release has served the head it was set for: a large request is not starved by small ones.
// So barging is bounded: no waiter waits much longer than the fairness interval beyond its turn.
// A waiter that leaves the queue without a wake-up (timeout, cancel, interrupt) runs the grant
// step too, with nothing added and under the same lock as its departure (parking_lot::Grant),
// since its request may have been what held the smaller ones behind it.
//
// A waiter woken with kGranted that no longer wants the permits (its wait was cancelled while the
// grant was on its way, its thread is gone) releases them again; one woken with kCompete runs the
// grant step again for the next ones: abandon_wake().
//
// JavaScript runs both fast paths itself with Atomics on the same word (lib/semaphore.js), using
// the layout constants the binding exports.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "lot/atomic_ref.h"
#include "lot/deadline.h"
#include "lot/function_ref.h"
#include "lot/parking_lot.h"
#include "lot/wait_step.h"
#include "primitives/int32_words.h"

namespace parklock {

class SemaphoreWord : public Int32Words<1> {
 public:
  static constexpr std::int32_t kWaitersBit = std::numeric_limits<std::int32_t>::min();  // bit 31
  static constexpr std::int32_t kHandOffBit = std::int32_t{1} << 30;
  static constexpr std::int32_t kPermitsMask = kHandOffBit - 1;
  // The most permits a word holds, and the largest request or release.
  static constexpr std::int32_t kMaxPermits = kPermitsMask;

  // The tokens a queued waiter is woken with.
  enum Wake : WakeToken {
    kGranted = 4 * kTokenSpaceSize,  // the requested permits are now yours
    kCompete,                        // permits are free: compete for them
  };

  enum class ReleaseStatus { kReleased, kOverflow, kCorrupt, kBadCount };

  static constexpr std::int32_t permits_of(std::int32_t word) noexcept {
    return word & kPermitsMask;
  }
  static constexpr bool has_waiters(std::int32_t word) noexcept {
    return (word & kWaitersBit) != 0;
  }
  static constexpr bool hands_off(std::int32_t word) noexcept { return (word & kHandOffBit) != 0; }
  static constexpr bool is_corrupt(std::int32_t word) noexcept {
    return hands_off(word) && !has_waiters(word);
  }
  // Whether `n` is a possible request or release: 1..kMaxPermits.
  static constexpr bool valid_count(std::int64_t n) noexcept { return n >= 1 && n <= kMaxPermits; }

  explicit SemaphoreWord(std::int32_t* word) noexcept : word_(word) {}

  // Takes `n` permits if enough are available and not set aside for the waiters; never waits.
  bool try_acquire(std::int32_t n) noexcept {
    if (!valid_count(n)) return false;
    std::int32_t seen = word().load(std::memory_order_relaxed);
    while (!hands_off(seen) && permits_of(seen) >= n) {
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

  // The contended part of release(): adds the permits and runs the grant step.
  ReleaseStatus release_slow(std::int32_t n) noexcept;

  // The acquire protocol, one step, for `waiter.request()` permits: takes them now (kAcquired),
  // or queues `waiter` (its wake-up token is one of Wake) and returns kPending; kTimedOut if
  // they are not available and `deadline` has passed (it never queues then); kCorrupt. Never
  // blocks.
  Outcome acquire_or_enqueue(Waiter& waiter, Deadline deadline = Deadline::never());

  // An acquire as a WaitStep (wait_step.h), blocking or Promise.
  class AcquireStep;

  // A waiter that asked for `request` permits and received `token` but no longer wants them
  // (cancelled, its thread is gone) passes on what the token gave it: granted permits are
  // released, and a wake-up to compete goes to the next waiters.
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
  // WaitSite::look_again: the grant step, with nothing added, wakes the waiters here whose
  // requests the permits another process released cover, to compete for them.
  static void look_again(const void* address) noexcept;

 private:
  atomic_ref<std::int32_t> word() const noexcept { return atomic_ref<std::int32_t>(*word_); }

  // What a would-be waiter does with the word under the bucket lock.
  enum class Claim { kTaken, kQueue, kWouldBlock, kCorrupt };
  Claim take_or_announce(std::int32_t n, bool may_queue) noexcept;

  // Under the bucket lock: subtracts `request` for a queued waiter if that many are available.
  bool take_for_waiter(std::int64_t request) noexcept;

  // Adds `n` (0: none) and runs the grant step, all under the bucket lock. A grant step asks the
  // parking lot whether the head's turn is fair (parking_lot::FairTurn).
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
