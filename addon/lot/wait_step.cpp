#include "lot/wait_step.h"

#include "lot/interrupt.h"

namespace parklock {

bool WaitStep::cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept {
  return parking_lot::cancel(
      waiter, [](const void*) -> const parking_lot::Grant* { return nullptr; }, deferred);
}

namespace {

// Why a queued blocking waiter stopped sleeping without a wake-up.
enum class Leaving { kTimedOut, kStopped, kAlreadyHeld, kDeadlock };

// One sleep of a queued blocking waiter, with the step's watch open (LockWatch): the token it was
// woken with, or why it is leaving.
struct Slept {
  std::optional<WakeToken> token;
  Leaving leaving = Leaving::kTimedOut;
};

Slept sleep_watched(const WaitStep& step, BlockingWaiter& waiter, Deadline deadline) {
  const Interrupt* outer = current_interrupt();
  const std::optional<LockWatch> watch = outer != nullptr ? step.watch(waiter) : std::nullopt;
  if (!watch) {
    switch (waiter.park(deadline)) {
      case ThreadParker::Wake::kUnparked:
        return {waiter.token()};
      case ThreadParker::Wake::kTimedOut:
        return {std::nullopt, Leaving::kTimedOut};
      case ThreadParker::Wake::kInterrupted:
        return {std::nullopt, Leaving::kStopped};
    }
  }
  // The thread's own interrupt is asked first and its answer kept: a lock handed to this very
  // waiter names this thread too, and a thread being stopped must still pass it on.
  const ThreadId self = waiter.thread();
  WaitsForWatch waits_for(self, watch->lock);
  bool stopped = false;
  bool deadlock = false;
  const auto poll = [&] {
    stopped = outer->requested();
    if (stopped || watch->lock.owner() == self) return true;
    deadlock = watch->for_the_lock && waits_for.poll();
    return deadlock;
  };
  const Interrupt watching{outer->poll_interval, poll};
  ThreadParker::Wake wake;
  {
    const InterruptScope scope(&watching);
    wake = waiter.park(deadline);
  }
  switch (wake) {
    case ThreadParker::Wake::kUnparked:
      // Woken as the watch fired: a deadlock seen in the same instant is over (this thread goes
      // on), and a lock handed to this waiter is simply taken.
      if (deadlock) take_deadlock_cycle();
      return {waiter.token()};
    case ThreadParker::Wake::kTimedOut:
      return {std::nullopt, Leaving::kTimedOut};
    case ThreadParker::Wake::kInterrupted:
      break;
  }
  if (stopped) return {std::nullopt, Leaving::kStopped};
  return {std::nullopt, deadlock ? Leaving::kDeadlock : Leaving::kAlreadyHeld};
}

constexpr Outcome outcome_of(Leaving leaving) noexcept {
  switch (leaving) {
    case Leaving::kTimedOut:
      return Outcome::kTimedOut;
    case Leaving::kStopped:
      return Outcome::kInterrupted;
    case Leaving::kAlreadyHeld:
      return Outcome::kAlreadyHeld;
    case Leaving::kDeadlock:
      break;
  }
  return Outcome::kDeadlock;
}

}  // namespace

Outcome wait_blocking(WaitStep& step, Deadline deadline, std::optional<WakeToken> woken) {
  step.deadline_ = deadline;
  BlockingWaiter waiter(Clock::now(), step.request(), step.waiter_thread(current_thread_id()));
  Outcome outcome = woken ? step.resume(waiter, *woken) : step.start(waiter);
  while (outcome == Outcome::kPending) {
    const Slept slept = sleep_watched(step, waiter, deadline);
    std::optional<WakeToken> token = slept.token;
    if (!token) {
      if (slept.leaving == Leaving::kTimedOut && step.waits_past_deadline(waiter)) {
        deadline = Deadline::never();
        step.deadline_ = deadline;
        continue;
      }
      if (step.cancel(waiter, nullptr)) {
        if (slept.leaving != Leaving::kTimedOut) return outcome_of(slept.leaving);
        // Queued again to finish a duty (kPending): the deadline is spent.
        deadline = Deadline::never();
        step.deadline_ = deadline;
        outcome = step.on_cancelled(waiter);
        if (outcome == Outcome::kCancelled) outcome = Outcome::kTimedOut;
        continue;
      }
      // A waker dequeued it between the wake and the cancel: its token is on the way and must
      // not be dropped. Only a stopping thread gives it away; a waiter whose deadline passed as it
      // was woken still takes its turn.
      waiter.parker().park_until_unparked();
      token = waiter.token();
    }
    waiter.parker().rearm();
    // A thread being stopped cannot use what it was handed: it passes it on.
    if ((!slept.token && slept.leaving == Leaving::kStopped) ||
        ThreadParker::interrupt_requested()) {
      step.abandon(waiter, *token);
      return Outcome::kInterrupted;
    }
    outcome = step.resume(waiter, *token);
  }
  return outcome;
}

}  // namespace parklock
