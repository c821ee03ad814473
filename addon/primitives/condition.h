// A condition variable over one 32-bit word, used with a MutexWord.
//
// Shared-memory layout (kBytes = 4, kAlign = 4; zero is a condition nobody waits on):
//
//   value  name             meaning
//   -----  ---------------  -----------------------------------------------------------------------
//   0      kNoWaiters       nobody is queued: notify_one()/notify_all() have nothing to do, which
//                           is how JavaScript skips the addon when it notifies an idle condition
//   1      kMayHaveWaiters  someone may be queued (set by each waiter under the bucket lock before
//                           it releases its mutex; cleared under the same lock by a notify that
//                           empties the queue, or by the departure of the last waiter)
//
// In memory that other processes share (sharedMemory(), cross_process.h) no process sees the
// others' queues, so the word counts the waits of every process instead:
//
//   bits    field    meaning
//   ------  -------  ---------------------------------------------------------------------------
//   0       hint     kMayHaveWaiters while `waiters` is not 0, so that 0 still means "nobody
//                    waits, in any process" and JavaScript skips the addon
//   1..10   waiters  waits registered, in every process: one from its queueing (under its bucket
//                    lock, before it releases the mutex) until it claims a notification or leaves
//   11..20  pending  notifications posted and not yet claimed; never more than `waiters`
//   21..30  epoch    how many times a notify found waiters, modulo 1024
//   31      -        always 0
//
// A waiter notes the epoch as it registers (as its request(); it holds the mutex, so no notify
// that holds it can come between). A notify that finds waiters advances the epoch, which makes
// every waiter registered so far eligible: notify_one() adds one pending notification, up to one
// per waiter, and notify_all() one for each. Each process's waiters claim them oldest first under
// their bucket lock, while their epoch differs from the word's (one CAS takes a notification and
// the registration together): the notifier's own at once, the others' when their relay wakes on
// the changed word. A waiter that registered after the latest notify cannot claim, so no wait
// takes a notification meant for the waiters that were there before it, which the waiters of a
// turn-taking protocol depend on. A waiter that leaves without a notification (timeout, abort,
// interrupt) withdraws; if every waiter had one pending, it takes one with it.
//
// The region's registration ledger (registration_ledger.h) records under which region identity
// each registration was made (the waiter's request() carries it besides the epoch), so that the
// registrations of a process that died, or of a thread that ended, are taken back out of the
// word: by notify_all() before it posts, so that it counts only the waits that can claim, and by
// a registration that finds the word at kMostWaiters, so that the limit bounds the waits at once,
// not over the file's life. A word at kMostWaiters live waits, or a ledger without a free entry
// once the ended identities' are taken, refuses a wait (kTooManyWaiters).
//
// What this does not promise, unlike within a process: which eligible process's waiter takes a
// notification is a race. Until something takes the registrations of a dead process out, a
// notify_one() counts them, and notifications posted for them go to other eligible waiters,
// which may then wake without being meant (a spurious wake-up, which a wait in a loop that
// re-checks its predicate absorbs); none is lost. A waiter that has seen a multiple of 1024
// notifies go by without claiming finds its own epoch again, and waits for the next notify; a
// notify made without holding the mutex may come between a waiter's look at the epoch and its
// registration, and that waiter may then claim its notification.
//
// Waiting: queue on the condition's address (declaring the mutex, or on a shared word the epoch,
// as the waiter's request()), then release the mutex, then sleep; a notifier that holds the mutex
// therefore always finds the waiter queued. On waking, re-acquire the mutex; the wait returns with
// it held, even after a timeout.
//
// The mutex is recorded by the waiters (request()), in process memory, not in the condition's
// word as Rust's Condvar records it: JavaScript can write anything into shared memory, and
// notify_all() writes to the mutex word it finds, so an address kept there would let one stray
// store make it write anywhere.
//
// notify_all() does not wake every blocked thread to fight for the mutex: if the mutex is held it
// marks it contended, wakes the oldest few blocked threads (they spin for the mutex, so that a few
// wake-ups are always under way) and moves (requeues) the other blocked threads onto the mutex's
// own queue, where each is woken by an unlock in turn, holding the mutex's tokens
// (MutexWord::Wake). Asynchronous waiters are woken to compete, as notify_one() each would (waking
// one wakes no sleeping thread). Only when the mutex is free are they all woken to compete.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "across_processes/cross_process.h"
#include "lot/atomic_ref.h"
#include "lot/deadline.h"
#include "lot/parking_lot.h"
#include "lot/wait_step.h"
#include "primitives/int32_words.h"
#include "primitives/mutex.h"

namespace parklock {

class ConditionWord : public Int32Words<1> {
 public:
  enum Hint : std::int32_t { kNoWaiters = 0, kMayHaveWaiters = 1 };

  // The token of a notification; distinct from every MutexWord::Wake token, because a requeued
  // waiter is later woken by its mutex instead.
  static constexpr WakeToken kNotified = 2 * kTokenSpaceSize;

  // How many waiters notify_all() wakes when it moves the rest onto the held mutex's queue: enough
  // wake-ups under way to hide one another's latency, few enough that they rarely outlast their
  // spin and park again.
  static constexpr std::size_t kWakeFirstOnRequeue = 4;

  // The fields of a word in memory other processes share (above).
  static constexpr int kWaiterShift = 1;
  static constexpr int kPendingShift = 11;
  static constexpr int kEpochShift = 21;
  static constexpr std::int32_t kMostWaiters = (1 << (kPendingShift - kWaiterShift)) - 1;
  static constexpr std::int32_t kEpochs = 1 << (kPendingShift - kWaiterShift);
  static constexpr std::int32_t waiters_of(std::int32_t word) noexcept {
    return (word >> kWaiterShift) & kMostWaiters;
  }
  static constexpr std::int32_t pending_of(std::int32_t word) noexcept {
    return (word >> kPendingShift) & kMostWaiters;
  }
  static constexpr std::int32_t epoch_of(std::int32_t word) noexcept {
    return (word >> kEpochShift) & (kEpochs - 1);
  }
  static constexpr std::int32_t shared_word(std::int32_t waiters, std::int32_t pending,
                                            std::int32_t epoch) noexcept {
    return (waiters != 0 ? kMayHaveWaiters : kNoWaiters) | (waiters << kWaiterShift) |
           (pending << kPendingShift) | ((epoch & (kEpochs - 1)) << kEpochShift);
  }
  // A shared word no operation writes: negative, more pending than waiting, or waiters without
  // the hint.
  static constexpr bool is_corrupt_shared(std::int32_t word) noexcept {
    return word < 0 || pending_of(word) > waiters_of(word) ||
           (waiters_of(word) != 0 && (word & kMayHaveWaiters) == 0);
  }

  explicit ConditionWord(std::int32_t* word) noexcept
      : word_(word), shared_(cross_process::is_shared(word)) {}

  class AwaitStep;

  // The caller holds `mutex` as `self`. Releases it, waits for a notification (or the deadline),
  // and re-acquires it before returning, except when interrupted (the thread is going away):
  // kAcquired (notified) or kTimedOut, both holding the mutex; kOwnerDied: re-acquired, but its
  // previous owner had ended holding it (`*ended_owner`, if given, names it); kAlreadyHeld:
  // re-acquiring would deadlock, because a Promise lock of this very thread was handed the mutex
  // while the thread was blocked here; kDeadlock: re-acquiring closed a cycle of blocked threads
  // (waits_for.h); kInterrupted, kNotOwner, kCorrupt, kTooManyWaiters (a shared word, above).
  Outcome wait(MutexWord mutex, ThreadId self, Deadline deadline = Deadline::never(),
               ThreadId* ended_owner = nullptr);

  // Wakes the longest waiter; returns 1, or 0 if none waited.
  std::size_t notify_one() noexcept;

  // Requeues or wakes every waiter (see above); returns how many.
  std::size_t notify_all() noexcept;

  // Queues `waiter` (whose request() must be request_for(mutex)); the caller then releases the
  // mutex itself. kPending: queued; kCorrupt or kTooManyWaiters (a shared word): nothing queued.
  Outcome enqueue(Waiter& waiter);

  // Takes a queued waiter out of whichever queue it is in, the condition's or (once notify_all()
  // moved it, or its re-lock queued it) the mutex's; false if its wake-up is already on its way.
  bool cancel(Waiter& waiter, MutexWord mutex, parking_lot::Wakeups* deferred = nullptr) noexcept;

  // A waiter that was handed `token` but is going away passes it on.
  void abandon_wake(MutexWord mutex, ThreadId self, WakeToken token) noexcept;

  const void* address() const noexcept { return word_; }
  // The site of condition waiters (parking_lot.h).
  static const WaitSite kWaitSite;
  // The WaitSite::look_again of a shared condition: this process's waiters claim the
  // notifications posted elsewhere.
  static void look_again(const void* address) noexcept;
  // The request() of a waiter with this mutex, read while the caller holds it: the mutex, or on a
  // shared word the epoch it registers in and the calling thread's region identity, which its
  // registration is recorded under (above).
  std::int64_t request_for(MutexWord mutex) const noexcept;
  static constexpr std::int64_t shared_request(std::int32_t epoch, ThreadId registrant) noexcept {
    return (std::int64_t{registrant} << 32) | epoch;
  }
  static constexpr std::int32_t epoch_of_request(std::int64_t request) noexcept {
    return static_cast<std::int32_t>(request & (kEpochs - 1));
  }
  static constexpr ThreadId registrant_of(std::int64_t request) noexcept {
    return static_cast<ThreadId>(request >> 32);
  }

 private:
  atomic_ref<std::int32_t> word() const noexcept { return atomic_ref<std::int32_t>(*word_); }
  void mark_may_have_waiters() noexcept {
    word().store(kMayHaveWaiters, std::memory_order_seq_cst);
  }
  // A waiter's departure without a notification, under the bucket lock: the last one out clears
  // the hint, so that notifies skip the addon again.
  void on_waiter_left(bool queue_empty) noexcept {
    if (queue_empty) word().store(kNoWaiters, std::memory_order_relaxed);
  }

  // The shared word's side (above); register_waiter() and withdraw() run under the bucket lock
  // of the waiter's queueing or departure, and keep the ledger's order: a registration goes into
  // the word before the ledger, and out of the ledger before the word.
  Outcome register_waiter(ThreadId registrant) noexcept;
  void withdraw(ThreadId registrant) noexcept;
  // Advances the epoch and posts one notification (`all`: one for each waiter); returns 1 (`all`:
  // the number of waiters), or 0 if nobody waits.
  std::size_t post(bool all) noexcept;
  // The oldest waiters here claim what is pending, each woken with kNotified.
  void claim_pending() noexcept;
  // Takes the registrations of identities that ended out of the word, looking at every entry of
  // the ledger (`thorough`), or else at the word's home window, and beyond it only when the
  // window does not account for every registration the word counts (registration_ledger.h).
  void reclaim(bool thorough) noexcept;
  // Takes `count` registrations out of the shared word at `word`, and the notifications pending
  // beyond the waiters left.
  static void forget(std::int32_t* word, std::int32_t count) noexcept;

  std::int32_t* word_;
  bool shared_;  // in memory other processes share: the word counts (above)
};

// One wait on a condition, in two phases. Queued on the condition until notified (or cancelled),
// then re-locking its mutex through the mutex's own LockStep, so that the wait always finishes
// holding the mutex: a notified waiter competes as the mutex's LockStep with `notified` does, a
// waiter notify_all() moved onto the mutex's queue resumes that LockStep with the mutex's token,
// and a cancelled or timed-out one re-locks as a plain lock, reporting kCancelled (kTimedOut when
// blocking) once it holds the mutex.
class ConditionWord::AwaitStep final : public WaitStep {
 public:
  AwaitStep(ConditionWord condition, MutexWord mutex, ThreadId self) noexcept
      : condition_(condition), mutex_(mutex), self_(self), request_(condition.request_for(mutex)) {}

  std::int64_t request() const override { return request_; }
  // The identity the mutex is re-acquired as, which a hand-off of the mutex writes into its word
  // (in a region, the region identity the caller holds it as).
  ThreadId acts_as() const noexcept override { return self_; }
  Outcome start(Waiter& waiter) override;
  Outcome resume(Waiter& waiter, WakeToken token) override;
  void abandon(Waiter& waiter, WakeToken token) noexcept override;
  bool cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept override;
  Outcome on_cancelled(Waiter& waiter) override;
  // A cancel that lost the race with a notification changes nothing: notified wins, and the
  // mutex must be re-acquired either way.
  Outcome resume_cancelled(Waiter& waiter, WakeToken token) override {
    return resume(waiter, token);
  }
  bool waits_past_deadline(const Waiter& waiter) const override { return !on_condition(waiter); }
  std::optional<LockWatch> watch(const Waiter& waiter) const override;

 private:
  bool on_condition(const Waiter& waiter) const noexcept {
    return waiter.address() == condition_.address();
  }
  // What the re-lock came to, as the wait's outcome.
  Outcome relocked(Outcome locked);

  ConditionWord condition_;
  MutexWord mutex_;
  const ThreadId self_;
  const std::int64_t request_;
  std::optional<MutexWord::LockStep> relock_;  // from the notification (or cancel) on
  Outcome outcome_ = Outcome::kAcquired;       // what the wait reports once it holds the mutex
};

}  // namespace parklock
