#include "condition.h"

#include "lock_wait.h"

namespace parklock {

const WaitSite ConditionWord::kWaitSite{"condition", &key_is_address, nullptr, nullptr};

namespace {

// What a wait that timed out re-locks with: no token from anyone.
constexpr WakeToken kNoToken = 0;

// The wait's status once the mutex is re-acquired (or not) with `locked`; `outcome` is what the
// wait itself came to (notified or timed out).
ConditionWord::WaitStatus after_relock(LockStatus locked, ConditionWord::WaitStatus outcome) {
  switch (locked) {
    case LockStatus::kAcquired:
      return outcome;
    case LockStatus::kOwnerDied:
      return ConditionWord::WaitStatus::kOwnerDied;
    case LockStatus::kInterrupted:
      return ConditionWord::WaitStatus::kInterrupted;
    case LockStatus::kAlreadyHeld:
      return ConditionWord::WaitStatus::kAlreadyHeld;
    case LockStatus::kDeadlock:
      return ConditionWord::WaitStatus::kDeadlock;
    case LockStatus::kTimedOut:  // no deadline is passed
    case LockStatus::kCorrupt:
    case LockStatus::kCancelled:  // the rest are never a lock's
    case LockStatus::kPending:
    case LockStatus::kNotEqual:
    case LockStatus::kNotOwner:
    case LockStatus::kLeader:
      break;
  }
  return ConditionWord::WaitStatus::kCorrupt;
}

ConditionWord::WaitStatus relock(MutexWord mutex, ThreadId self, WakeToken token,
                                 ConditionWord::WaitStatus outcome, ThreadId* ended_owner) {
  if (token == kNoToken) {
    return after_relock(mutex.lock_slow(self, Deadline::never(), ended_owner), outcome);
  }
  return after_relock(token == ConditionWord::kNotified
                          ? mutex.lock_after_notify(self, ended_owner)
                          : mutex.lock_after_wake(self, token, ended_owner),
                      outcome);
}

}  // namespace

ConditionWord::WaitStatus ConditionWord::wait(MutexWord mutex, ThreadId self, Deadline deadline,
                                              ThreadId* ended_owner) {
  if (!mutex.is_locked() || mutex.owner_thread() != self) return WaitStatus::kNotOwner;
  bool released = true;
  auto release = [&] { released = mutex.unlock(self) == MutexWord::UnlockStatus::kUnlocked; };
  const FunctionRef<void()> release_mutex = release;
  // While this thread sleeps here, the mutex can only come to name it through one of its own
  // asynchronous locks, which cannot run until this wait returns: re-acquiring would never
  // succeed, so the wait watches for that (self_deadlock_watch.h) and reports it.
  const LockIdentity lock{&MutexWord::kWaitSite, mutex.address()};
  const auto abandon = [&](WakeToken token) { abandon_wake(mutex, self, token); };
  const auto left = [this](bool queue_empty) { on_waiter_left(queue_empty); };
  const parking_lot::Grant on_leave{nullptr, left};
  parking_lot::ParkOptions options;
  options.deadline = deadline;
  options.before_sleep = &release_mutex;
  options.request = request_for(mutex);
  options.site = &kWaitSite;
  options.on_leave = &on_leave;
  const auto queue = [this] {
    mark_may_have_waiters();
    return true;
  };
  const LockPark parked =
      park_for_lock(address(), queue, options, self, lock, Waiting::kWithTheLockReleased, abandon);
  if (!released) {
    // The mutex word was corrupted under us; leave the queue if still in it.
    return WaitStatus::kCorrupt;
  }
  // `queue` always queues, so there is no retry. A timed-out wait still re-acquires the mutex;
  // a stop, or the deadlock the watch saw, ends the wait without it.
  if (parked.status == LockStatus::kTimedOut) {
    return relock(mutex, self, kNoToken, WaitStatus::kTimedOut, ended_owner);
  }
  if (parked.status) return after_relock(*parked.status, WaitStatus::kCorrupt);
  // The re-lock either takes a mutex handed to this very waiter or detects the deadlock itself.
  return relock(mutex, self, parked.token, WaitStatus::kNotified, ended_owner);
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
    // The oldest waiter's mutex, looked at under the bucket lock; a stale hint is cleared there
    // if nobody is queued.
    std::optional<std::int64_t> mutex_address;
    const auto peek = [&](std::int64_t request) -> std::optional<WakeToken> {
      mutex_address = request;
      return std::nullopt;
    };
    const FunctionRef<std::optional<WakeToken>(std::int64_t)> offer = peek;
    const auto left = [this](bool queue_empty) { on_waiter_left(queue_empty); };
    parking_lot::unpark_filter(address(), parking_lot::Grant{&offer, left});
    if (!mutex_address) return 0;
    auto* mutex_word = reinterpret_cast<std::int32_t*>(static_cast<std::intptr_t>(*mutex_address));
    MutexWord mutex(mutex_word);
    bool found = false;
    const parking_lot::RequeueResult result = parking_lot::requeue(
        address(), mutex.address(),
        [&](std::size_t waiting) -> parking_lot::RequeueDecision {
          found = waiting > 0;
          word().store(kNoWaiters, std::memory_order_relaxed);
          // Requeued waiters are woken by the holder's unlock, so there must be a holder who
          // knows there are waiters; with the mutex free, everyone is woken to compete instead.
          // The oldest few are woken at once all the same, as though released by the mutex with
          // others still waiting (the state is 2 already, so the duty that token carries is
          // done): they spin for the lock and each of their unlocks wakes one more, so a few
          // wake-ups are always under way. Woken one per unlock, the waiters would pass one
          // wake-up latency after another, and waking them all would bring back the stampede
          // that requeueing avoids.
          // Promise waiters are all woken to compete, as notify_one() each would: waking one
          // wakes no thread that sleeps, and its thread takes all of its woken waiters in one
          // turn, its running tasks barging. Moved, each would be resumed by an unlock in turn
          // and leave the mutex idle until its thread's event loop got to it: one cross-thread
          // latency after another (8 workers x 16 waiters: 1.4-1.9x the time of waking all).
          // With no more waiters than are woken first, nobody would be moved: they are all
          // woken as notify_one() each would, leaving the mutex unmarked, so that neither the
          // notifier's unlock nor theirs goes through the slow path for waiters that are not
          // there.
          const bool move = waiting > kWakeFirstOnRequeue && mutex.mark_parked_if_locked();
          parking_lot::RequeueDecision decision{move, kNotified, &MutexWord::kWaitSite,
                                                kWakeFirstOnRequeue,
                                                MutexWord::kReleasedWithMoreWaiters};
          decision.wake_asynchronous = true;
          return decision;
        },
        // Waiters that named another mutex (a misuse, but not ours to break) are woken instead.
        [&](std::int64_t request) { return request == *mutex_address; });
    // Everyone queued since the look left meanwhile: look again.
    if (!found) continue;
    return result.woken + result.moved;
  }
}

void ConditionWord::enqueue(Waiter& waiter) {
  parking_lot::enqueue(
      address(), waiter,
      [this] {
        mark_may_have_waiters();
        return true;
      },
      &kWaitSite);
}

bool ConditionWord::cancel(Waiter& waiter, MutexWord mutex,
                           parking_lot::Wakeups* deferred) noexcept {
  const auto condition_left = [this](bool queue_empty) { on_waiter_left(queue_empty); };
  const auto mutex_left = [&mutex](bool queue_empty) { mutex.on_waiter_left(queue_empty); };
  const parking_lot::Grant on_condition{nullptr, condition_left};
  const parking_lot::Grant on_mutex{nullptr, mutex_left};
  return parking_lot::cancel(
      waiter, [&](const void* key) { return key == address() ? &on_condition : &on_mutex; },
      deferred);
}

void ConditionWord::abandon_wake(MutexWord mutex, ThreadId self, WakeToken token) noexcept {
  if (token == kNotified) {
    notify_one();  // the notification goes to the next waiter
  } else {
    mutex.abandon_wake(self, token);  // it had been requeued: pass the mutex's token on
  }
}

}  // namespace parklock
