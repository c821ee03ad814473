// A reusable (cyclic) barrier for a fixed number of parties in two 32-bit words of caller-owned
// (possibly shared) memory.
//
// Shared-memory layout (kBytes = 8, kAlign = 4):
//
//   word  bits    field       values
//   ----  ------  ----------  ------------------------------------------------------------------
//   [0]   0..15   arrived     0..parties-1: parties that arrived in the current generation and
//                             still wait; parties-1 is the most it ever holds (the last arrival
//                             moves to the next generation instead). >= parties: corrupt
//   [0]   16..31  generation  how many generations have completed, modulo 2^16
//   [1]   0..31   parties     1..kMaxParties, written once by init(); 0: uninitialized (zeroed
//                             memory); anything else: corrupt
//
// Arrival is one compare-and-swap on word [0]: arrived + 1, or, for the last party, generation + 1
// with arrived 0. So the state never shows a completed generation that has not moved on, every
// transition is a single atomic step (a thread stopped between any two of its instructions
// cannot leave the barrier half-advanced), and a value with arrived >= parties is never written.
// The last arrival then notifies every waiter of word [0] (futex::notify), in the same call.
//
// Waiting (ArriveStep). A party that arrived in generation g (and was not last) waits while word
// [0] still shows generation g: it queues on the futex key while the word holds the value it
// loaded, and loops on a value that changed (another party arrived or left) or an early wake-up
// (a notify from elsewhere). The futex checks the value under the bucket lock and the leader
// notifies after its compare-and-swap, so no wake-up is lost.
//
// Leaving. A waiter that times out (or is cancelled) withdraws its arrival with a compare-and-swap
// arrived - 1, but only while word [0] still shows generation g: then the generation goes on
// waiting for the others as if it had never arrived, and a later arrival of the same thread is
// counted once. If the generation completed first (the compare-and-swap finds another generation)
// the waiter has passed the barrier: it reports kAcquired, not the timeout, so every generation
// still has exactly `parties` passing parties and exactly one leader.
//
// An interrupted wait (the thread is being terminated) keeps its arrival: the party did arrive,
// and the generation it joined completes when the others arrive. (A JavaScript worker that is
// terminated cannot run code to withdraw, so this is also what happens there.)
//
// Limits. The generation is 16 bits. A waiter compares generations for equality, so a waiter that
// stalls while exactly a multiple of 65536 further generations complete would take the barrier
// for its own generation again. That needs more threads than parties (with exactly `parties`
// threads, no generation after g can complete without the waiters of g) and a thread stalled for
// 65536 generations; then a waiter passes one generation late, and a timed-out waiter could
// withdraw an arrival that is not its own.
//
// Memory order: arrivals are acq_rel read-modify-writes, so the last arrival's compare-and-swap
// carries every party's earlier writes, and a waiter's acquire load of the new generation sees
// them: whatever any party wrote before arriving is visible to every party once it has passed.
//
// JavaScript (lib/barrier.js) uses the same words with Atomics: arrivals that are not last and
// withdrawals are single compare-and-swaps it runs itself; the last arrival calls arrive() here,
// so that its compare-and-swap and its notify cannot be separated by worker.terminate().
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "lot/atomic_ref.h"
#include "lot/deadline.h"
#include "lot/parking_lot.h"
#include "lot/wait_step.h"
#include "primitives/futex.h"
#include "primitives/int32_words.h"

namespace parklock {

class BarrierWord : public Int32Words<2> {
 public:
  static constexpr std::size_t kStateIndex = 0;
  static constexpr std::size_t kPartiesIndex = 1;
  static constexpr int kGenerationShift = 16;
  static constexpr std::int32_t kArrivedMask = (1 << kGenerationShift) - 1;
  static constexpr std::int32_t kMaxParties = kArrivedMask;

  using Generation = std::uint32_t;  // 0..65535

  static constexpr Generation generation_of(std::int32_t state) noexcept {
    return static_cast<std::uint32_t>(state) >> kGenerationShift;
  }
  static constexpr std::int32_t arrived_of(std::int32_t state) noexcept {
    return state & kArrivedMask;
  }
  // Generation + 1 (wrapping after 65535) with nobody arrived.
  static constexpr std::int32_t next_generation(std::int32_t state) noexcept {
    return static_cast<std::int32_t>((generation_of(state) + 1) << kGenerationShift);
  }
  static constexpr bool valid_parties(std::int32_t parties) noexcept {
    return parties >= 1 && parties <= kMaxParties;
  }

  enum class ArriveStatus {
    kLast,           // completed the generation and woke its waiters: this party is the leader
    kJoined,         // counted in `generation`; must wait for it to complete (or leave)
    kUninitialized,  // the parties word is 0: nothing changed
    kCorrupt,        // a word holds a value never written: nothing changed
  };
  struct Arrival {
    ArriveStatus status;
    Generation generation;  // the generation it arrived in
  };

  explicit BarrierWord(std::int32_t* words) noexcept : words_(words) {}

  // Writes generation 0, nobody arrived, and `parties` (valid_parties). Not for a barrier in use.
  void init(std::int32_t parties) noexcept {
    state().store(0, std::memory_order_relaxed);
    parties_word().store(parties, std::memory_order_release);
  }

  Arrival arrive() noexcept;

  // Withdraws an arrival in `generation`: true if withdrawn, false if that generation has already
  // completed (the caller has passed the barrier).
  bool leave(Generation generation) noexcept;

  class ArriveStep;

  // ArriveStep, blocking: kLeader, kAcquired (passed), kTimedOut (withdrawn), kInterrupted (the
  // arrival stands) or kCorrupt.
  Outcome arrive_and_wait(Deadline deadline = Deadline::never());

  std::int32_t parties() const noexcept { return parties_word().load(std::memory_order_acquire); }
  std::int32_t state_value() const noexcept { return state().load(std::memory_order_acquire); }
  // Where waiters park: the state word.
  const std::int32_t* address() const noexcept { return words_ + kStateIndex; }
  // The site of barrier waiters, on the futex keys of the state word (parking_lot.h).
  static const WaitSite kWaitSite;

 private:
  atomic_ref<std::int32_t> state() const noexcept {
    return atomic_ref<std::int32_t>(words_[kStateIndex]);
  }
  atomic_ref<std::int32_t> parties_word() const noexcept {
    return atomic_ref<std::int32_t>(words_[kPartiesIndex]);
  }

  std::int32_t* words_;
};

// An arrival and the wait for its generation to complete: kLeader (this arrival completed it),
// kAcquired (passed) or kCorrupt (uninitialized or corrupt words: nothing changed). A wait that
// gives up (cancelled, timed out) withdraws its arrival, unless the generation completed first:
// then it has passed (kAcquired). A wait abandoned otherwise (its thread stopping) keeps its
// arrival.
class BarrierWord::ArriveStep final : public futex::ChangeStep {
 public:
  explicit ArriveStep(BarrierWord barrier) noexcept
      : ChangeStep(barrier.address(), &kWaitSite), barrier_(barrier) {}
  Outcome start(Waiter& waiter) override;
  Outcome on_cancelled(Waiter& waiter) override;

 private:
  std::optional<Outcome> finished(std::int32_t state) const override;

  BarrierWord barrier_;
  Generation generation_ = 0;  // the one it arrived in
};

// A self-contained barrier for C++ code, in the manner of std::barrier (without a completion
// function), with a timed wait that withdraws on timeout.
class Barrier {
 public:
  // Throws std::invalid_argument unless 1 <= parties <= BarrierWord::kMaxParties.
  explicit Barrier(std::int32_t parties);
  Barrier(const Barrier&) = delete;
  Barrier& operator=(const Barrier&) = delete;

  // Returns true in exactly one party of each generation (the last to arrive).
  bool arrive_and_wait() { return wait_until(Deadline::never()).value_or(false); }

  // As arrive_and_wait(), or nothing if `timeout` passed first (the arrival is then withdrawn).
  template <typename Rep, typename Period>
  std::optional<bool> wait_for(std::chrono::duration<Rep, Period> timeout) {
    return wait_until(Deadline::at(Clock::now() + timeout));
  }

  std::int32_t parties() const noexcept { return word().parties(); }

 private:
  std::optional<bool> wait_until(Deadline deadline);
  BarrierWord word() const noexcept { return BarrierWord(words_); }
  alignas(BarrierWord::kAlign) mutable std::int32_t words_[BarrierWord::kWordCount] = {};
};

}  // namespace parklock
