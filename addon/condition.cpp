#include "condition.h"

#include "self_deadlock_watch.h"

namespace parklock {

namespace {

ConditionWord::WaitStatus relock(MutexWord mutex, ThreadId self, WakeToken token,
                                 const Interrupt* interrupt, ConditionWord::WaitStatus outcome,
                                 ThreadId* ended_owner) {
  const MutexWord::LockStatus locked =
      token == ConditionWord::kNotified || token == 0
          ? mutex.lock_slow(self, Deadline::never(), interrupt, ended_owner)
          : mutex.lock_after_wake(self, token, interrupt, ended_owner);
  switch (locked) {
    case MutexWord::LockStatus::kAcquired:
      return outcome;
    case MutexWord::LockStatus::kOwnerDied:
      return ConditionWord::WaitStatus::kOwnerDied;
    case MutexWord::LockStatus::kInterrupted:
      return ConditionWord::WaitStatus::kInterrupted;
    case MutexWord::LockStatus::kAlreadyHeld:
      return ConditionWord::WaitStatus::kAlreadyHeld;
    case MutexWord::LockStatus::kTimedOut:  // no deadline is passed
    case MutexWord::LockStatus::kCorrupt:
      break;
  }
  return ConditionWord::WaitStatus::kCorrupt;
}

}  // namespace

ConditionWord::WaitStatus ConditionWord::wait(MutexWord mutex, ThreadId self, Deadline deadline,
                                              const Interrupt* interrupt, ThreadId* ended_owner) {
  if (!mutex.is_locked() || mutex.owner_thread() != self) return WaitStatus::kNotOwner;
  bool released = true;
  auto release = [&] { released = mutex.unlock(self) == MutexWord::UnlockStatus::kUnlocked; };
  const FunctionRef<void()> release_mutex = release;
  // While this thread sleeps here, the mutex can only come to name it through one of its own
  // asynchronous locks, which cannot run until this wait returns: re-acquiring would never
  // succeed, so the wait watches for that (self_deadlock_watch.h) and reports it.
  auto held_by_this_thread = [&] { return mutex.is_locked() && mutex.owner_thread() == self; };
  const SelfDeadlockWatch watch(interrupt, held_by_this_thread);
  parking_lot::ParkOptions options;
  options.deadline = deadline;
  options.interrupt = watch.interrupt();
  options.before_sleep = &release_mutex;
  options.request = request_for(mutex);
  const ParkResult parked = parking_lot::park(
      address(),
      [this] {
        mark_may_have_waiters();
        return true;
      },
      options);
  if (!released) {
    // The mutex word was corrupted under us; leave the queue if still in it.
    return WaitStatus::kCorrupt;
  }
  switch (parked.status) {
    case ParkResult::Status::kTimedOut:
      return relock(mutex, self, 0, interrupt, WaitStatus::kTimedOut, ended_owner);
    case ParkResult::Status::kInterrupted:
      return watch.interrupt_requested() ? WaitStatus::kInterrupted : WaitStatus::kAlreadyHeld;
    case ParkResult::Status::kInvalid:  // validate always holds
    case ParkResult::Status::kUnparked:
      break;
  }
  // Woken while the watch fired: only a real interrupt gives the wake-up away; otherwise the
  // re-lock below either takes a mutex handed to this very waiter or detects the deadlock itself.
  if (parked.interrupted && watch.interrupt_requested()) {
    abandon_wake(mutex, self, parked.token);
    return WaitStatus::kInterrupted;
  }
  return relock(mutex, self, parked.token, interrupt, WaitStatus::kNotified, ended_owner);
}

std::size_t ConditionWord::notify_one() noexcept {
  const UnparkInfo info = parking_lot::unpark_one(address(), [this](const UnparkInfo& info) {
    if (!info.has_more) word().store(kNoWaiters, std::memory_order_relaxed);
    return kNotified;
  });
  return info.unparked ? 1 : 0;
}

std::size_t ConditionWord::notify_all() noexcept {
  for (;;) {
    const std::optional<std::int64_t> mutex_address = parking_lot::first_request(address());
    if (!mutex_address) {
      // Clear a stale hint, but only under the bucket lock and only if still nobody is queued;
      // otherwise someone queued since the look: go round again.
      bool empty = false;
      parking_lot::unpark_granted(
          address(), [](std::int64_t) -> std::optional<WakeToken> { return std::nullopt; },
          [&](bool queue_empty) {
            empty = queue_empty;
            if (empty) word().store(kNoWaiters, std::memory_order_relaxed);
          });
      if (empty) return 0;
      continue;
    }
    auto* mutex_word = reinterpret_cast<std::int32_t*>(static_cast<std::intptr_t>(*mutex_address));
    MutexWord mutex(mutex_word);
    const parking_lot::RequeueResult result = parking_lot::requeue(
        address(), mutex.address(), [&](std::size_t) -> parking_lot::RequeueDecision {
          word().store(kNoWaiters, std::memory_order_relaxed);
          // Requeued waiters are woken by the holder's unlock, so there must be a holder who
          // knows there are waiters; with the mutex free, everyone is woken to compete instead.
          return {mutex.mark_parked_if_locked(), kNotified, &MutexWord::recover_from_ended_owner};
        });
    return result.woken + result.moved;
  }
}

void ConditionWord::enqueue(Waiter& waiter) {
  parking_lot::enqueue(address(), waiter, [this] {
    mark_may_have_waiters();
    return true;
  });
}

void ConditionWord::abandon_wake(MutexWord mutex, ThreadId self, WakeToken token) noexcept {
  if (token == kNotified) {
    notify_one();  // the notification goes to the next waiter
  } else {
    mutex.abandon_wake(self, token);  // it had been requeued: pass the mutex's token on
  }
}

}  // namespace parklock
