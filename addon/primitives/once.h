// A once-only initialization in one 32-bit word of caller-owned (possibly shared) memory: the
// first caller runs an initializer, every other caller waits until it has completed; a failed
// initializer leaves it to the next caller.
//
// Shared-memory layout (kBytes = 4, kAlign = 4; zero is a once that has not run):
//
//   bits   field   values
//   -----  ------  -------------------------------------------------------------------------------
//   0..1   state   0 kNotDone        nobody has completed it, nobody runs it (the whole word is 0)
//                  1 kDone           completed for good (the whole word is 1)
//                  2 kRunning        the runner is running the initializer; nobody has parked
//                  3 kRunningParked  running, and waiters may be parked: the runner's finish must
//                                    take the slow path and wake them
//   2..31  runner  the running thread's ThreadId (kRunnerShift); 0 while not running
//
// Begin (a) load: 1 means done. (b) CAS 0 -> self|2: the caller is the runner (kLeader). (c) CAS
// the state 2 -> 3 to announce a waiter and (d) park while the state still reads 3; (e) after a
// wake-up go back to (a). A runner's own blocking begin would wait for itself: kAlreadyHeld.
//
// Finish (a) CAS self|2 -> 1 (success) or 0 (failure): the fast path. Otherwise the state is 3,
// and the slow path stores the same value under the bucket lock while it dequeues every waiter,
// then wakes them all with kFinished: after a success they find 1 and return, after a failure
// they compete again for the run as newcomers do.
//
// Owner death (owner_death.h), as for the mutex: a runner field naming a thread that has ended is
// taken over by whoever finds it on the slow path, with one CAS that keeps the state bits, and
// reported (kOwnerDied: this caller runs the initializer again, and learns that the previous run
// never completed); with waiters parked when the runner's thread ends, recover_from_ended_runner()
// makes the oldest one the runner (token kHandedOff carrying the ended runner). A waiter that
// gives such a hand-off away puts the ended runner back and recovers again, so the report is never
// lost. In memory other processes share, the runner field names a region identity
// (shared_region.h), which ends when its process dies.
//
// JavaScript (lib/once.js) runs both fast paths itself with Atomics on the same word, using the
// layout constants the binding exports.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "lot/atomic_ref.h"
#include "lot/parking_lot.h"
#include "lot/thread_id.h"
#include "lot/wait_step.h"
#include "primitives/int32_words.h"
#include "primitives/thread_field.h"

namespace parklock {

class OnceWord : public Int32Words<1> {
 public:
  enum State : std::int32_t { kNotDone = 0, kDone = 1, kRunning = 2, kRunningParked = 3 };

  using RunnerField = ThreadField<State, 2>;
  static constexpr int kRunnerShift = RunnerField::kShift;
  static constexpr std::int32_t kStateMask = RunnerField::kStateMask;

  // Tokens a waiter receives.
  enum Wake : WakeToken {
    kFinished = 6 * kTokenSpaceSize,  // the run ended (completed or failed): look again
    kHandedOff,                       // the runner ended: the run is now yours
  };

  enum class FinishStatus { kFinished, kNotRunner, kCorrupt };

  // The word of `thread` running the initializer in a state; a word's state; a word's runner.
  static constexpr auto run_by = RunnerField::pack;
  static constexpr auto state_of = RunnerField::state_of;
  static constexpr auto runner_of = RunnerField::thread_of;

  // The runner a word names (kNoThread if nobody runs).
  static constexpr ThreadId runner_in(std::int32_t word) noexcept {
    return word == kNotDone || word == kDone ? kNoThread : runner_of(word);
  }

  explicit OnceWord(std::int32_t* word) noexcept : word_(word) {}

  // One begin, blocking: kAcquired (done: nothing to run), kLeader (the caller runs the
  // initializer and must finish()), kOwnerDied (kLeader, after a runner that ended; `*ended` set),
  // kAlreadyHeld (the caller is the runner), kTimedOut, kInterrupted, kCorrupt.
  Outcome begin(ThreadId self, Deadline deadline = Deadline::never(), ThreadId* ended = nullptr);

  // Ends the run of `self`: done for good (`success`) or not done, waking every waiter.
  FinishStatus finish(ThreadId self, bool success) noexcept;

  // The begin protocol, one step: finishes (as begin()), or queues `waiter` (its wake-up token is
  // one of Wake) and returns kPending. Never sleeps.
  Outcome begin_or_enqueue(ThreadId self, Waiter& waiter, ThreadId* ended);

  // A begin as a WaitStep (wait_step.h), blocking or Promise.
  class BeginStep;

  // The WaitSite::recover of once waiters: makes the oldest waiter the runner of the once at
  // `address` if `ended` runs it.
  static void recover_from_ended_runner(const void* address, ThreadId ended) noexcept;

  // Who runs the once at `address` (kNoThread if nobody): WaitSite::holder.
  static ThreadId runner_at(const void* address) noexcept;

  // WaitSite::look_again: the run ended in another process (or its runner died there): every
  // waiter here looks again, as after a local finish.
  static void look_again(const void* address) noexcept;

  // The site of once waiters (parking_lot.h).
  static const WaitSite kWaitSite;

  bool is_done() const noexcept { return word().load(std::memory_order_acquire) == kDone; }
  ThreadId runner() const noexcept { return runner_at(word_); }
  const void* address() const noexcept { return word_; }

 private:
  atomic_ref<std::int32_t> word() const noexcept { return atomic_ref<std::int32_t>(*word_); }

  // A waiter handed the run with `token` gives it up: the ended runner goes back, and is
  // recovered again from there.
  void give_back(ThreadId self, WakeToken token) noexcept;

  std::int32_t* word_;
};

class OnceWord::BeginStep final : public WaitStep {
 public:
  BeginStep(OnceWord once, ThreadId self) noexcept : once_(once), self_(self) {}
  Outcome start(Waiter& waiter) override;
  Outcome resume(Waiter& waiter, WakeToken token) override;
  void abandon(Waiter& waiter, WakeToken token) noexcept override;
  std::optional<LockWatch> watch(const Waiter& waiter) const override;
  // The run handed over to this waiter names `self_`: in memory other processes share, its
  // region identity.
  ThreadId acts_as() const noexcept override { return self_; }

 private:
  Outcome step(Waiter& waiter);

  OnceWord once_;
  const ThreadId self_;
};

}  // namespace parklock
