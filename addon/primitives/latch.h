// A single-use countdown latch in one 32-bit word of caller-owned (possibly shared) memory.
//
// Shared-memory layout (kBytes = 4, kAlign = 4):
//
//   word  field  values
//   ----  -----  ---------------------------------------------------------------------------------
//   [0]   count  0..kMaxCount  the count-downs still missing; 0 means open (released) for good
//                < 0           never written: a word with it is corrupt
//
// Zeroed memory is an open latch. init() writes the initial count; after that the word only ever
// decreases, and only by count_down(): a compare-and-swap from the value it read, so a count-down
// that asks for more than is left fails without changing anything.
//
// Waking. The count-down that makes the word 0 notifies every waiter of the word (futex::notify),
// in the same call as its compare-and-swap. Earlier count-downs wake nobody. A waiter
// (AwaitStep) loops: load; 0 means released; otherwise queue on the futex key while the word
// still holds the value it loaded. The futex checks that value under the bucket lock, so the
// releasing notify, which comes after the word became 0, either finds the waiter queued or the
// waiter finds 0: no lost wake-up. A waiter woken early (another user of the futex notified the
// word) just loops with what is left of its deadline.
//
// Memory order: every count-down is a release (acq_rel RMW, so the count-downs form one release
// sequence) and a waiter's load of 0 is an acquire: whatever any thread wrote before its
// count_down() is visible to every thread that returns from wait() released.
//
// JavaScript (lib/latch.js) reads the same word with Atomics: it waits through the futex entries
// and runs the count-downs that leave the count above 0 itself (they wake nobody); the one that
// reaches 0 goes through count_down() here, so that its compare-and-swap and its notify cannot
// be separated by worker.terminate().
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

#include "lot/atomic_ref.h"
#include "lot/deadline.h"
#include "lot/parking_lot.h"
#include "lot/wait_step.h"
#include "primitives/futex.h"
#include "primitives/int32_words.h"

namespace parklock {

class LatchWord : public Int32Words<1> {
 public:
  static constexpr std::size_t kCountIndex = 0;
  static constexpr std::int32_t kMaxCount = std::numeric_limits<std::int32_t>::max();

  enum class CountDownStatus {
    kCounted,       // the count went down and is still above 0
    kReleased,      // this count-down made it 0 and woke every waiter
    kNotPositive,   // n < 1: nothing changed
    kExceedsCount,  // n is more than what is left: nothing changed
    kCorrupt,       // the word is negative: nothing changed
  };
  struct CountDownResult {
    CountDownStatus status;
    // The count after the count-down, or the count that was found when it was refused.
    std::int32_t count;
  };

  explicit LatchWord(std::int32_t* words) noexcept : word_(words + kCountIndex) {}

  // Writes the initial count (0..kMaxCount; 0 is an open latch). Not for a latch in use.
  void init(std::int32_t count) noexcept { word().store(count, std::memory_order_release); }

  CountDownResult count_down(std::int32_t n = 1) noexcept;

  class AwaitStep;

  // AwaitStep, blocking: kAcquired (open), kTimedOut, kInterrupted or kCorrupt.
  Outcome wait(Deadline deadline = Deadline::never()) const;

  // The count now (acquire): negative only if the word is corrupt.
  std::int32_t count() const noexcept { return word().load(std::memory_order_acquire); }
  bool try_wait() const noexcept { return count() == 0; }
  const void* address() const noexcept { return word_; }
  // The site of latch waiters, on the futex keys of the count word (parking_lot.h).
  static const WaitSite kWaitSite;

 private:
  atomic_ref<std::int32_t> word() const noexcept { return atomic_ref<std::int32_t>(*word_); }

  std::int32_t* word_;
};

// A wait for the latch to open: kAcquired (open) or kCorrupt. A wait that gives up (cancelled,
// timed out) as the latch opens reports it open: the count is checked last.
class LatchWord::AwaitStep final : public futex::ChangeStep {
 public:
  explicit AwaitStep(LatchWord latch) noexcept : ChangeStep(latch.word_, &kWaitSite) {}
  Outcome start(Waiter& waiter) override { return look(waiter); }
  Outcome on_cancelled(Waiter& waiter) override;

 private:
  std::optional<Outcome> finished(std::int32_t count) const override;
};

// A self-contained latch for C++ code, in the manner of std::latch but with timed waits and
// checked count-downs.
class Latch {
 public:
  // Throws std::invalid_argument if count is negative.
  explicit Latch(std::int32_t count);
  Latch(const Latch&) = delete;
  Latch& operator=(const Latch&) = delete;

  // Throws std::invalid_argument if n < 1 or n exceeds the count left.
  void count_down(std::int32_t n = 1);
  bool try_wait() const noexcept { return word().try_wait(); }
  void wait() const { word().wait(); }
  template <typename Rep, typename Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) const {
    return word().wait(Deadline::at(Clock::now() + timeout)) == Outcome::kAcquired;
  }
  void arrive_and_wait(std::int32_t n = 1) {
    count_down(n);
    wait();
  }
  std::int32_t count() const noexcept { return word().count(); }

 private:
  LatchWord word() const noexcept { return LatchWord(&word_); }
  // Mutable: waiting is logically const (as for std::latch), but the futex takes the word's
  // address.
  alignas(LatchWord::kAlign) mutable std::int32_t word_;
};

}  // namespace parklock
