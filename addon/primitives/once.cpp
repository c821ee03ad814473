#include "primitives/once.h"

#include <limits>

#include "across_processes/shared_region.h"
#include "lot/owner_death.h"

namespace parklock {

const WaitSite OnceWord::kWaitSite{"once", &key_is_address, &OnceWord::runner_at,
                                   &OnceWord::recover_from_ended_runner, &OnceWord::look_again};

void OnceWord::look_again(const void* address) noexcept {
  parking_lot::unpark_some(address, std::numeric_limits<std::size_t>::max(), kFinished);
}

ThreadId OnceWord::runner_at(const void* address) noexcept {
  const std::int32_t seen =
      atomic_ref<const std::int32_t>(*static_cast<const std::int32_t*>(address))
          .load(std::memory_order_relaxed);
  return runner_in(seen);
}

Outcome OnceWord::begin(ThreadId self, Deadline deadline, ThreadId* ended) {
  BeginStep step(*this, self);
  return with_ended_owner(wait_blocking(step, deadline), step, ended);
}

Outcome OnceWord::begin_or_enqueue(ThreadId self, Waiter& waiter, ThreadId* ended) {
  for (;;) {
    std::int32_t seen = word().load(std::memory_order_acquire);
    if (seen == kDone) return Outcome::kAcquired;
    if (seen == kNotDone) {
      if (word().compare_exchange_weak(seen, run_by(self, kRunning), std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
        return Outcome::kLeader;
      }
      continue;
    }
    const State state = state_of(seen);
    const ThreadId runner = runner_of(seen);
    if ((state != kRunning && state != kRunningParked) || runner == kNoThread) {
      return Outcome::kCorrupt;
    }
    // A blocking wait for its own thread's run would never end; a Promise wait queues behind it
    // (its thread's asynchronous initializer finishes while it waits).
    if (runner == self) {
      if (waiter.blocking()) return Outcome::kAlreadyHeld;
    } else if (shared_region::owner_ended(address(), runner)) {
      // The state stays: with state 3 the parked waiters are still woken by this run's finish.
      if (word().compare_exchange_weak(seen, run_by(self, state), std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
        if (ended != nullptr) *ended = runner;
        return Outcome::kOwnerDied;
      }
      continue;
    }
    if (state == kRunning &&
        !word().compare_exchange_weak(seen, (seen & ~kStateMask) | kRunningParked,
                                      std::memory_order_relaxed)) {
      continue;
    }
    const auto must_wait = [this] {
      return state_of(word().load(std::memory_order_relaxed)) == kRunningParked;
    };
    if (parking_lot::enqueue(address(), waiter, must_wait, &kWaitSite)) return Outcome::kPending;
  }
}

OnceWord::FinishStatus OnceWord::finish(ThreadId self, bool success) noexcept {
  const std::int32_t after = success ? kDone : kNotDone;
  for (;;) {
    std::int32_t seen = word().load(std::memory_order_relaxed);
    const State state = state_of(seen);
    if ((state != kRunning && state != kRunningParked) || runner_of(seen) == kNoThread) {
      return seen == kNotDone || seen == kDone ? FinishStatus::kNotRunner : FinishStatus::kCorrupt;
    }
    if (runner_of(seen) != self) return FinishStatus::kNotRunner;
    if (state == kRunningParked) break;
    if (word().compare_exchange_weak(seen, after, std::memory_order_release,
                                     std::memory_order_relaxed)) {
      return FinishStatus::kFinished;
    }
  }
  // Only the runner changes a word whose state is 3, so it stays as seen until the store below,
  // which happens under the bucket lock after every waiter is dequeued: a thread validating its
  // park sees 3 (and is among those woken) or the new value (and does not park).
  const auto wake = [](std::int64_t) -> std::optional<WakeToken> { return kFinished; };
  const FunctionRef<std::optional<WakeToken>(std::int64_t)> everyone = wake;
  const auto store = [&](bool /*queue_empty*/) { word().store(after, std::memory_order_release); };
  parking_lot::unpark_filter(address(), parking_lot::Grant{&everyone, store});
  return FinishStatus::kFinished;
}

void OnceWord::recover_from_ended_runner(const void* address, ThreadId ended) noexcept {
  OnceWord once(const_cast<std::int32_t*>(static_cast<const std::int32_t*>(address)));
  if (once.runner() != ended) return;
  parking_lot::unpark_one(address, [&](const UnparkInfo& info) -> WakeToken {
    std::int32_t seen = once.word().load(std::memory_order_relaxed);
    for (;;) {
      // Taken over meanwhile by a thread that found it on its slow path, or nobody to hand it
      // to (the next caller takes it over lazily): the waiter dequeued here, if any, looks again.
      if (runner_in(seen) != ended || !info.unparked) return kFinished;
      const std::int32_t theirs = run_by(info.thread, info.has_more ? kRunningParked : kRunning);
      if (once.word().compare_exchange_weak(seen, theirs, std::memory_order_acq_rel,
                                            std::memory_order_relaxed)) {
        return with_ended_owner(kHandedOff, ended);
      }
    }
  });
}

void OnceWord::give_back(ThreadId self, WakeToken token) noexcept {
  const ThreadId ended = ended_owner_of(token);
  std::int32_t seen = word().load(std::memory_order_relaxed);
  while (runner_in(seen) == self &&
         !word().compare_exchange_weak(seen, run_by(ended, state_of(seen)),
                                       std::memory_order_release, std::memory_order_relaxed)) {
  }
  recover_from_ended_runner(address(), ended);
}

Outcome OnceWord::BeginStep::start(Waiter& waiter) {
  return step(waiter);
}

Outcome OnceWord::BeginStep::resume(Waiter& waiter, WakeToken token) {
  if (grant_of(token) == kHandedOff) {
    set_ended_owner(ended_owner_of(token));
    return Outcome::kOwnerDied;
  }
  return step(waiter);
}

Outcome OnceWord::BeginStep::step(Waiter& waiter) {
  ThreadId ended = kNoThread;
  const Outcome outcome = once_.begin_or_enqueue(self_, waiter, &ended);
  set_ended_owner(ended);
  return outcome;
}

void OnceWord::BeginStep::abandon(Waiter& /*waiter*/, WakeToken token) noexcept {
  // Every waiter was woken by kFinished: nothing is owed to the others.
  if (grant_of(token) == kHandedOff) once_.give_back(self_, token);
}

std::optional<LockWatch> OnceWord::BeginStep::watch(const Waiter& /*waiter*/) const {
  return LockWatch{{&kWaitSite, once_.address()}, /*for_the_lock=*/true};
}

}  // namespace parklock
