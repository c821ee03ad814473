#include "primitives/condition.h"

#include <algorithm>

#include "across_processes/registration_ledger.h"

namespace parklock {

const WaitSite ConditionWord::kWaitSite{"condition", &key_is_address, nullptr, nullptr,
                                        &ConditionWord::look_again};

Outcome ConditionWord::wait(MutexWord mutex, ThreadId self, Deadline deadline,
                            ThreadId* ended_owner) {
  AwaitStep step(*this, mutex, self);
  return with_ended_owner(wait_blocking(step, deadline), step, ended_owner);
}

Outcome ConditionWord::AwaitStep::start(Waiter& waiter) {
  if (!mutex_.is_locked() || mutex_.owner_thread() != self_) return Outcome::kNotOwner;
  const Outcome queued = condition_.enqueue(waiter);
  if (queued != Outcome::kPending) return queued;
  // Queued first, released second: a notifier holding the mutex always finds this waiter.
  if (mutex_.unlock(self_) != MutexWord::UnlockStatus::kUnlocked) {
    // A corrupt mutex word: the waiter leaves again, unless a notification already took it.
    if (cancel(waiter, nullptr)) return Outcome::kCorrupt;
  }
  return Outcome::kPending;
}

Outcome ConditionWord::AwaitStep::resume(Waiter& waiter, WakeToken token) {
  // Notified (kNotified): the re-lock begins, competing for the mutex. Otherwise the token is the
  // mutex's: the waiter was moved onto its queue (by notify_all(), or by its own re-lock), and
  // the mutex woke it or handed it over.
  if (!relock_) relock_.emplace(mutex_, self_, /*notified=*/true);
  return relocked(token == kNotified ? relock_->start(waiter) : relock_->resume(waiter, token));
}

Outcome ConditionWord::AwaitStep::on_cancelled(Waiter& waiter) {
  // Still waiting for a notification: the wait ends cancelled (timed out, for a blocking wait).
  // Already on the mutex's queue: it had been notified, and only its place there is lost.
  const bool notified = !on_condition(waiter);
  if (!notified) outcome_ = waiter.blocking() ? Outcome::kTimedOut : Outcome::kCancelled;
  relock_.emplace(mutex_, self_, notified);
  return relocked(relock_->start(waiter));
}

Outcome ConditionWord::AwaitStep::relocked(Outcome locked) {
  if (locked == Outcome::kOwnerDied) set_ended_owner(relock_->ended_owner());
  return locked == Outcome::kAcquired ? outcome_ : locked;
}

void ConditionWord::AwaitStep::abandon(Waiter& /*waiter*/, WakeToken token) noexcept {
  condition_.abandon_wake(mutex_, self_, token);
}

bool ConditionWord::AwaitStep::cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept {
  return condition_.cancel(waiter, mutex_, deferred);
}

std::optional<LockWatch> ConditionWord::AwaitStep::watch(const Waiter& waiter) const {
  if (relock_) return relock_->watch(waiter);
  // With the mutex released, it can only come to name this thread through one of the thread's
  // own Promise locks, which cannot run while it sleeps here: the wait could never re-lock.
  // Moved onto the mutex's queue, it waits for the mutex like any lock.
  return LockWatch{{&MutexWord::kWaitSite, mutex_.address()}, !on_condition(waiter)};
}

std::size_t ConditionWord::notify_one() noexcept {
  if (shared_) return post(/*all=*/false);
  const UnparkInfo info = parking_lot::unpark_one(address(), [this](const UnparkInfo& info) {
    if (!info.has_more) word().store(kNoWaiters, std::memory_order_relaxed);
    return kNotified;
  });
  return info.unparked ? 1 : 0;
}

std::size_t ConditionWord::notify_all() noexcept {
  if (shared_) {
    // So that it counts, and posts for, only the waits that can claim. Not in notify_one(),
    // whose answer would change only when every wait counted had ended, and which a ping-pong
    // between processes calls on every turn: a liveness check of the other process there costs
    // a system call per turn.
    reclaim(/*thorough=*/false);
    return post(/*all=*/true);
  }
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
    const auto decide = [&](std::size_t waiting) -> parking_lot::RequeueDecision {
      found = waiting > 0;
      word().store(kNoWaiters, std::memory_order_relaxed);
      // Requeued waiters are woken by the holder's unlock, so there must be a holder who knows
      // there are waiters; with the mutex free, everyone is woken to compete instead. With no
      // more waiters than are woken first (below), nobody would be moved: they are all woken as
      // notify_one() each would, leaving the mutex unmarked, so that neither the notifier's
      // unlock nor theirs goes through the slow path for waiters that are not there.
      const bool move = waiting > kWakeFirstOnRequeue && mutex.mark_parked_if_locked();
      return {move, kNotified, &MutexWord::kWaitSite};
    };
    std::size_t woken_first = 0;
    const auto wake_instead = [&](const Waiter& waiter) -> std::optional<WakeToken> {
      // Waiters that named another mutex (a misuse, but not ours to break) are woken.
      // Promise waiters are all woken to compete, as notify_one() each would: waking one wakes
      // no thread that sleeps, and its thread takes all of its woken waiters in one turn, its
      // running tasks barging. Moved, each would be resumed by an unlock in turn and leave the
      // mutex idle until its thread's event loop got to it: one cross-thread latency after
      // another (8 workers x 16 waiters: 1.4-1.9x the time of waking all).
      if (waiter.request() != *mutex_address || !waiter.blocking()) return kNotified;
      // The oldest few blocked waiters are woken at once all the same, as though released by the
      // mutex with others still waiting (the state is 2 already, so the duty that token carries
      // is done): they spin for the lock and each of their unlocks wakes one more, so a few
      // wake-ups are always under way. Woken one per unlock, the waiters would pass one wake-up
      // latency after another, and waking them all would bring back the stampede that
      // requeueing avoids.
      if (woken_first == kWakeFirstOnRequeue) return std::nullopt;
      ++woken_first;
      return MutexWord::kReleasedWithMoreWaiters;
    };
    const parking_lot::RequeueResult result =
        parking_lot::requeue(address(), mutex.address(), decide, wake_instead);
    // Everyone queued since the look left meanwhile: look again.
    if (!found) continue;
    return result.woken + result.moved;
  }
}

Outcome ConditionWord::enqueue(Waiter& waiter) {
  Outcome queued = Outcome::kPending;
  parking_lot::enqueue(
      address(), waiter,
      [&] {
        if (!shared_) {
          mark_may_have_waiters();
          return true;
        }
        queued = register_waiter(registrant_of(waiter.request()));
        return queued == Outcome::kPending;
      },
      &kWaitSite);
  return queued;
}

std::int64_t ConditionWord::request_for(MutexWord mutex) const noexcept {
  if (shared_) {
    return shared_request(epoch_of(word().load(std::memory_order_relaxed)),
                          shared_region::identity_at(word_, current_thread_id()));
  }
  return static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(mutex.address()));
}

Outcome ConditionWord::register_waiter(ThreadId registrant) noexcept {
  if (registrant == kNoThread) return Outcome::kTooManyWaiters;  // no identity in the region
  bool reclaimed = false;
  std::int32_t seen = word().load(std::memory_order_relaxed);
  for (;;) {
    if (is_corrupt_shared(seen)) return Outcome::kCorrupt;
    if (waiters_of(seen) == kMostWaiters) {
      if (reclaimed) return Outcome::kTooManyWaiters;
      reclaim(/*thorough=*/true);
      reclaimed = true;
      seen = word().load(std::memory_order_relaxed);
      continue;
    }
    if (word().compare_exchange_weak(
            seen, shared_word(waiters_of(seen) + 1, pending_of(seen), epoch_of(seen)),
            std::memory_order_seq_cst, std::memory_order_relaxed)) {
      break;
    }
  }
  registration_ledger::Registrations mine(word_, registrant);
  if (mine.add()) return Outcome::kPending;
  // Every entry is taken: those of identities that ended, on any word, make room.
  registration_ledger::take_ended(word_, registration_ledger::Scope::kEveryWord, 0, &forget);
  if (mine.add()) return Outcome::kPending;
  forget(word_, 1);
  return Outcome::kTooManyWaiters;
}

void ConditionWord::withdraw(ThreadId registrant) noexcept {
  registration_ledger::Registrations mine(word_, registrant);
  // Without it, a reclaimer has taken this registration out of the word already.
  if (!mine.take_one()) return;
  forget(word_, 1);
  mine.release();
}

void ConditionWord::forget(std::int32_t* word, std::int32_t count) noexcept {
  const atomic_ref<std::int32_t> shared(*word);
  std::int32_t seen = shared.load(std::memory_order_relaxed);
  std::int32_t after;
  do {
    if (is_corrupt_shared(seen) || waiters_of(seen) == 0) return;
    // With a notification pending for every waiter, those that leave take theirs with them: each
    // of the others still has one.
    const std::int32_t waiters = std::max(waiters_of(seen) - count, 0);
    after = shared_word(waiters, std::min(pending_of(seen), waiters), epoch_of(seen));
  } while (!shared.compare_exchange_weak(seen, after, std::memory_order_seq_cst,
                                         std::memory_order_relaxed));
}

void ConditionWord::reclaim(bool thorough) noexcept {
  const std::int32_t counted = waiters_of(word().load(std::memory_order_relaxed));
  if (counted == 0) return;
  using registration_ledger::Scope;
  registration_ledger::take_ended(word_, thorough ? Scope::kThisWord : Scope::kThisWordAtHome,
                                  counted, &forget);
}

std::size_t ConditionWord::post(bool all) noexcept {
  std::int32_t seen = word().load(std::memory_order_relaxed);
  std::int32_t waiters;
  std::int32_t after;
  do {
    if (is_corrupt_shared(seen)) return 0;
    waiters = waiters_of(seen);
    if (waiters == 0) return 0;
    const std::int32_t pending = all ? waiters : std::min(pending_of(seen) + 1, waiters);
    after = shared_word(waiters, pending, epoch_of(seen) + 1);
  } while (!word().compare_exchange_weak(seen, after, std::memory_order_seq_cst,
                                         std::memory_order_relaxed));
  // This process's waiters first; the grant step wakes every other process's relay after it.
  claim_pending();
  return all ? static_cast<std::size_t>(waiters) : 1;
}

void ConditionWord::claim_pending() noexcept {
  const auto claim = [this](std::int64_t request) -> std::optional<WakeToken> {
    // Waiters queue in the order they register: once one registered since the latest notify,
    // so did every waiter after it.
    const auto claimable = [registered_in = epoch_of_request(request)](std::int32_t seen) {
      return !is_corrupt_shared(seen) && pending_of(seen) != 0 && epoch_of(seen) != registered_in;
    };
    std::int32_t seen = word().load(std::memory_order_relaxed);
    if (!claimable(seen)) return std::nullopt;
    registration_ledger::Registrations mine(word_, registrant_of(request));
    // Out of the ledger before the word. Failing that, the waiter's identity ended (its thread
    // is going away) and a reclaimer took its registration out of the word: it is woken as a
    // spurious wake-up would be.
    if (!mine.take_one()) return kNotified;
    while (!word().compare_exchange_weak(
        seen, shared_word(waiters_of(seen) - 1, pending_of(seen) - 1, epoch_of(seen)),
        std::memory_order_seq_cst, std::memory_order_relaxed)) {
      if (claimable(seen)) continue;
      // Others claimed what was pending: the registration stays, unless a reclaimer took the
      // rest of its entry meanwhile.
      const bool kept = mine.put_back();
      if (!kept) forget(word_, 1);
      mine.release();
      return kept ? std::nullopt : std::optional<WakeToken>(kNotified);
    }
    mine.release();
    return kNotified;
  };
  const FunctionRef<std::optional<WakeToken>(std::int64_t)> offer = claim;
  parking_lot::unpark_filter(address(), parking_lot::Grant{&offer, [](bool) {}});
}

void ConditionWord::look_again(const void* address) noexcept {
  ConditionWord(static_cast<std::int32_t*>(const_cast<void*>(address))).claim_pending();
}

bool ConditionWord::cancel(Waiter& waiter, MutexWord mutex,
                           parking_lot::Wakeups* deferred) noexcept {
  const auto condition_left = [this, &waiter](bool queue_empty) {
    if (shared_) {
      withdraw(registrant_of(waiter.request()));
    } else {
      on_waiter_left(queue_empty);
    }
  };
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
