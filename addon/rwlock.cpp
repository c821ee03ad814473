#include "rwlock.h"

#include <optional>

#include "lock_wait.h"
#include "owner_death.h"
#include "spin.h"

namespace parklock {

Attempt RwLockWords::try_acquire_or_mark(Mode mode, ThreadId self, std::int32_t seen) {
  if (is_corrupt(seen)) return Attempt::kCorrupt;
  if (available(mode, seen)) {
    const std::int32_t mine = mode == Mode::kExclusive ? kWriter
                              : mode == Mode::kShared  ? seen + kOneReader
                                                       : seen + kUpgradable + kOneReader;
    if (!state().compare_exchange_weak(seen, mine, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
      return Attempt::kRetry;
    }
    if (mode != Mode::kShared) owner().store(self, std::memory_order_relaxed);
    return Attempt::kAcquired;
  }
  // Not available to this mode, so held (a free word with only the parked bit is corrupt).
  if ((seen & kParked) != 0) return Attempt::kContended;
  return state().compare_exchange_weak(seen, seen | kParked, std::memory_order_relaxed)
             ? Attempt::kContended
             : Attempt::kRetry;
}

RwLockWords::LockStatus RwLockWords::acquire_slow(Mode mode, ThreadId self, Deadline deadline,
                                                  ThreadId* ended_owner) {
  LockStep step(*this, mode, self);
  return with_ended_owner(wait_blocking(step, deadline), step, ended_owner);
}

RwLockWords::LockStatus RwLockWords::lock_slow(ThreadId self, Deadline deadline,
                                               ThreadId* ended_owner) {
  return acquire_slow(Mode::kExclusive, self, deadline, ended_owner);
}

RwLockWords::LockStatus RwLockWords::lock_shared_slow(ThreadId self, Deadline deadline,
                                                      ThreadId* ended_owner) {
  return acquire_slow(Mode::kShared, self, deadline, ended_owner);
}

RwLockWords::LockStatus RwLockWords::lock_upgradable_slow(ThreadId self, Deadline deadline,
                                                          ThreadId* ended_owner) {
  return acquire_slow(Mode::kUpgradable, self, deadline, ended_owner);
}

Outcome RwLockWords::try_lock_from_ended(Mode mode, ThreadId self, ThreadId* ended_owner) noexcept {
  if (take_from_ended_owner(mode, self, ended_owner)) return Outcome::kOwnerDied;
  if (!release_ended_upgrader(self)) return Outcome::kTimedOut;
  const bool acquired = mode == Mode::kShared      ? try_lock_shared()
                        : mode == Mode::kExclusive ? try_lock(self)
                                                   : try_lock_upgradable(self);
  return acquired ? Outcome::kAcquired : Outcome::kTimedOut;
}

bool RwLockWords::take_from_ended_owner(Mode mode, ThreadId self, ThreadId* ended_owner) noexcept {
  // Acquire: a state that a recovery's grant-less finish wrote (writer bit, owner word put back
  // just before) comes with that owner word.
  if ((state().load(std::memory_order_acquire) & kWriter) == 0) return false;
  ThreadId holder = owner().load(std::memory_order_acquire);
  // The owner word names a thread only while that thread holds the write lock or the upgradable
  // read lock (a holder clears it before releasing, and stores it only after taking its bit), and
  // an ended thread never releases: so an owner word naming an ended thread means that thread
  // holds the lock, and one CAS of the owner word away from that name decides who takes it over.
  if (holder == self || !thread_ended(holder)) return false;
  const ThreadId claimed = mode == Mode::kShared ? kNoThread : self;
  if (!owner().compare_exchange_strong(holder, claimed, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
    return false;
  }
  std::int32_t seen = state().load(std::memory_order_relaxed);
  if ((seen & kWriter) == 0) {
    // The write hold seen above was released since, and the name is an upgradable reader's that
    // ended: not a write lock to take over. The name goes back (nobody else writes the owner word
    // of a held upgradable lock) for release_ended_upgrader().
    ThreadId mine = claimed;
    owner().compare_exchange_strong(mine, holder, std::memory_order_relaxed);
    return false;
  }
  if (mode != Mode::kExclusive) {
    // The writer bit is this thread's now (nobody else acts on it), and only the parked bit can
    // change beside it: the write hold becomes this thread's read hold.
    const std::int32_t mine = mode == Mode::kShared ? kOneReader : kUpgradable | kOneReader;
    while (!state().compare_exchange_weak(seen, (seen & kParked) | mine, std::memory_order_acquire,
                                          std::memory_order_relaxed)) {
    }
  }
  if (ended_owner != nullptr) *ended_owner = holder;
  return true;
}

void RwLockWords::recover_from_ended_owner(const void* address, ThreadId ended) noexcept {
  RwLockWords lock(const_cast<std::int32_t*>(static_cast<const std::int32_t*>(address)));
  // Without the parked bit nobody waits: the next thread that wants the lock takes it over.
  const std::int32_t seen = lock.state().load(std::memory_order_acquire);
  if ((seen & kParked) == 0) return;
  if ((seen & kUpgradable) != 0) {
    lock.release_ended_upgrader(kNoThread);
    return;
  }
  if ((seen & kWriter) == 0) return;
  // Claimed as a reader would claim it; lost if a thread on its slow path took it over first.
  ThreadId expected = ended;
  if (!lock.owner().compare_exchange_strong(expected, kNoThread, std::memory_order_acquire,
                                            std::memory_order_relaxed)) {
    return;
  }
  lock.release_and_grant(kWriter, ended);
}

RwLockWords::UnlockStatus RwLockWords::release_exclusive_slow() noexcept {
  for (;;) {
    std::int32_t seen = state().load(std::memory_order_relaxed);
    if ((seen & kWriter) == 0 || is_corrupt(seen)) return UnlockStatus::kCorrupt;
    if ((seen & kParked) != 0) break;
    if (state().compare_exchange_weak(seen, 0, std::memory_order_release,
                                      std::memory_order_relaxed)) {
      return UnlockStatus::kUnlocked;
    }
  }
  release_and_grant(kWriter);
  return UnlockStatus::kUnlocked;
}

RwLockWords::UnlockStatus RwLockWords::downgrade(ThreadId self) noexcept {
  // The state never shows a free lock on the way, so no writer can take it; and while the parked
  // bit is set, no reader joins outside a grant.
  return release_write(self, kOneReader);
}

RwLockWords::UnlockStatus RwLockWords::release_parked_downgrade() noexcept {
  // The write hold becomes one read hold in the grant step, which lets in the readers at the head
  // of the queue. (Released is a negative amount here: the writer bit goes, a reader comes; the
  // grant step's arithmetic is modulo 2^32.)
  release_and_grant(kWriter - kOneReader);
  return UnlockStatus::kUnlocked;
}

RwLockWords::UnlockStatus RwLockWords::unlock_shared_slow() noexcept {
  for (;;) {
    std::int32_t seen = state().load(std::memory_order_relaxed);
    if (is_corrupt(seen)) return UnlockStatus::kCorrupt;
    if ((seen & kWriter) != 0 || readers_of(seen) == 0) return UnlockStatus::kNotOwner;
    // The only read hold left is the upgradable one, which unlock_upgradable() releases.
    if (readers_of(seen) == 1 && (seen & kUpgradable) != 0) return UnlockStatus::kNotOwner;
    if (readers_of(seen) == 1 && (seen & kParked) != 0) break;
    if (state().compare_exchange_weak(seen, seen - kOneReader, std::memory_order_release,
                                      std::memory_order_relaxed)) {
      // The upgrader waits for the readers beside it; this release left it alone.
      if ((seen & kUpgrading) != 0 && readers_of(seen) == 2) {
        parking_lot::unpark_some(upgrade_key(), 1, kUpgradeReady);
      }
      return UnlockStatus::kUnlocked;
    }
  }
  // The last read hold of a parked lock. While the parked bit is set no reader can join, so this
  // stays the last one until the release below (another release under the bucket lock may have
  // granted readers meanwhile; release_and_grant subtracts from whatever the word then holds).
  release_and_grant(kOneReader);
  return UnlockStatus::kUnlocked;
}

void RwLockWords::release_and_grant(std::int32_t released, ThreadId ended) noexcept {
  const auto unpark = [this](const parking_lot::Grant& grant) {
    parking_lot::unpark_filter(address(), grant);
  };
  while (!with_release_grant(released, ended, unpark)) {
  }
}

bool RwLockWords::with_release_grant(std::int32_t released, ThreadId ended,
                                     FunctionRef<void(const parking_lot::Grant&)> run) noexcept {
  // Decisions are taken on the word as first read under the bucket lock. With waiters queued the
  // parked bit is set, so the only concurrent change is a plain reader releasing on the fast
  // path, which it does only while it is not the last reader: the word only loses readers, and
  // the final update re-reads it. That can undo a decision in one case. The caller's own hold is
  // still counted while the step decides, so every other reader may leave on the fast path
  // meanwhile; the writer at the head, refused beside them, would then be left queued behind a
  // free lock (the word "parked" alone, corrupt) with nobody to release it. Rather than that, the
  // step changes nothing and reports it: the caller, still holding what it was releasing, runs it
  // again, on a word whose other readers are gone.
  std::optional<std::uint32_t> free_of_us;  // the state without the parked bit and `released`
  std::uint32_t granted_readers = 0;        // the upgradable reader included
  ThreadId granted_writer = kNoThread;
  ThreadId granted_upgrader = kNoThread;
  const auto without_us = [&](std::int32_t word) {
    return (static_cast<std::uint32_t>(word) & ~static_cast<std::uint32_t>(kParked)) -
           static_cast<std::uint32_t>(released);
  };
  // The first grant reports the ended writer (if any): that waiter is the one that takes over.
  const auto reported = [&](WakeToken token) {
    return granted_readers == 0 && granted_writer == kNoThread ? with_ended_owner(token, ended)
                                                               : token;
  };
  const auto grant = [&](std::int64_t request) -> std::optional<WakeToken> {
    if (!free_of_us) free_of_us = without_us(state().load(std::memory_order_relaxed));
    const std::uint32_t base = *free_of_us;
    if (granted_writer != kNoThread) return std::nullopt;
    const bool reader_fits =
        (base >> kReaderShift) + granted_readers < static_cast<std::uint32_t>(kMaxReaders);
    if (request == kSharedRequest) {
      // Not beside a writer, nor while an upgrade waits for the readers to leave.
      if ((base & (kWriter | kUpgrading)) != 0 || !reader_fits) return std::nullopt;
      const WakeToken token = reported(kGrantedShared);
      ++granted_readers;
      return token;
    }
    if (request < 0) {
      // An upgradable reader: beside readers, but not beside a writer or another upgradable one.
      const std::int64_t thread = -1 - request;
      if ((base & (kWriter | kUpgradable)) != 0 || granted_upgrader != kNoThread || !reader_fits ||
          thread <= 0 || thread > std::numeric_limits<ThreadId>::max()) {
        return std::nullopt;
      }
      const WakeToken token = reported(kGrantedUpgradable);
      ++granted_readers;
      granted_upgrader = static_cast<ThreadId>(thread);
      return token;
    }
    // A writer only as the first grant, and only into a free lock.
    if (base != 0 || granted_readers != 0 || request <= 0 ||
        request > std::numeric_limits<ThreadId>::max()) {
      return std::nullopt;
    }
    const WakeToken token = reported(kGrantedExclusive);
    granted_writer = static_cast<ThreadId>(request);
    return token;
  };
  bool stale = false;
  const auto finish = [&](bool queue_empty) {
    const bool granted = granted_readers != 0 || granted_writer != kNoThread;
    // A recovery that granted nothing (the waiters left meanwhile) must not free the lock: the
    // write hold stays the ended writer's, to be taken over by the next thread that wants it.
    const bool keep_ended = ended != kNoThread && !granted;
    // Whether the waiters were refused on account of holders that are gone now.
    const bool refused_for_nothing = !granted && !keep_ended && !queue_empty && released != 0 &&
                                     free_of_us.has_value() && *free_of_us != 0;
    // The writer bit stays set (or goes from readers to writer) in one step with this store, and
    // the owner word is written before it: no other writer can be between.
    if (granted_writer != kNoThread) owner().store(granted_writer, std::memory_order_relaxed);
    if (granted_upgrader != kNoThread) owner().store(granted_upgrader, std::memory_order_relaxed);
    if (keep_ended) owner().store(ended, std::memory_order_relaxed);
    std::int32_t seen = state().load(std::memory_order_relaxed);
    for (;;) {
      if (refused_for_nothing && without_us(seen) == 0) {
        stale = true;
        return;
      }
      std::uint32_t next = without_us(seen) + (granted_readers << kReaderShift);
      if (granted_writer != kNoThread || keep_ended) next |= kWriter;
      if (granted_upgrader != kNoThread) next |= kUpgradable;
      if (!queue_empty) next |= kParked;
      if (state().compare_exchange_weak(seen, static_cast<std::int32_t>(next),
                                        std::memory_order_acq_rel, std::memory_order_relaxed)) {
        return;
      }
    }
  };
  const FunctionRef<std::optional<WakeToken>(std::int64_t)> offer = grant;
  run(parking_lot::Grant{&offer, finish});
  return !stale;
}

Outcome RwLockWords::lock_or_enqueue(ThreadId self, Waiter& waiter, ThreadId* ended_owner,
                                     Deadline deadline) {
  const std::int64_t request = waiter.request();
  const Mode mode = request == kSharedRequest ? Mode::kShared
                    : request > 0             ? Mode::kExclusive
                                              : Mode::kUpgradable;
  // Only a blocking waiter spins: a Promise wait's thread has its event loop to run.
  const int spin_limit = waiter.blocking() ? spin_policy().limit : 0;
  const auto must_wait = [this] { return this->must_wait(); };
  int spins = 0;
  for (;;) {
    const std::int32_t seen = state().load(std::memory_order_relaxed);
    // Held, and nobody parked yet: the holder may be about to release.
    if (spins < spin_limit && !available(mode, seen) && (seen & kParked) == 0 &&
        !is_corrupt(seen)) {
      spin_pause(spins++);
      continue;
    }
    const Attempt attempt = try_acquire_or_mark(mode, self, seen);
    if (attempt == Attempt::kRetry) continue;
    if (attempt == Attempt::kAcquired) return Outcome::kAcquired;
    if (attempt == Attempt::kCorrupt) return Outcome::kCorrupt;
    // Never wait for a writer that has ended: take the lock over and report it. The parked bit
    // is set now and stays, so the release of the lock taken over still serves the waiters.
    if (take_from_ended_owner(mode, self, ended_owner)) return Outcome::kOwnerDied;
    if (release_ended_upgrader(self)) continue;
    if (deadline.expired()) {
      release_and_grant(0);  // the parked bit this waiter may have set is nobody's business now
      return Outcome::kTimedOut;
    }
    if (parking_lot::enqueue(address(), waiter, must_wait, &kWaitSite)) return Outcome::kPending;
  }
}

std::int64_t RwLockWords::LockStep::request() const {
  switch (mode_) {
    case Mode::kExclusive:
      return exclusive_request(self_);
    case Mode::kShared:
      return kSharedRequest;
    case Mode::kUpgradable:
      break;
  }
  return upgradable_request(self_);
}

Outcome RwLockWords::LockStep::start(Waiter& waiter) {
  // Whatever a blocking wait waits for here, it would wait for its own write or upgradable hold.
  // A Promise wait queues behind its own thread's hold like any other: that thread can release
  // while it waits.
  if (waiter.blocking() && lock_.is_named_holder(self_)) return Outcome::kAlreadyHeld;
  ThreadId ended = kNoThread;
  const Outcome outcome = lock_.lock_or_enqueue(self_, waiter, &ended, deadline());
  set_ended_owner(ended);
  return outcome;
}

// The only wake-up is a grant: the state already counts this waiter. The grant may carry the
// writer that ended holding the lock.
Outcome RwLockWords::LockStep::resume(Waiter& /*waiter*/, WakeToken token) {
  set_ended_owner(ended_owner_of(token));
  return ended_owner() == kNoThread ? Outcome::kAcquired : Outcome::kOwnerDied;
}

void RwLockWords::LockStep::abandon(Waiter& /*waiter*/, WakeToken token) noexcept {
  lock_.abandon_wake(self_, token);
}

// Leaving without a grant may unblock the waiters queued behind this one.
bool RwLockWords::LockStep::cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept {
  return lock_.cancel(waiter, deferred);
}

// A lock granted to one of this thread's own Promise waits while it blocks here would never be
// released, and neither would a lock in a cycle of blocked threads: the blocked wait watches for
// both (wait_step.h).
std::optional<LockWatch> RwLockWords::LockStep::watch(const Waiter& /*waiter*/) const {
  return LockWatch{{&kWaitSite, lock_.address()}, /*for_the_lock=*/true};
}

void RwLockWords::abandon_wake(ThreadId self, WakeToken token) noexcept {
  const ThreadId ended = ended_owner_of(token);
  switch (grant_of(token)) {
    case kGrantedExclusive: {
      if (ended == kNoThread) {
        unlock(self);
        return;
      }
      // The report that the writer ended must reach whoever takes the lock next: the write hold
      // goes back to the ended writer (the writer bit never left), and is recovered again from
      // there, or taken over lazily if nobody waits.
      ThreadId expected = self;
      owner().compare_exchange_strong(expected, ended, std::memory_order_release,
                                      std::memory_order_relaxed);
      recover_from_ended_owner(address(), ended);
      return;
    }
    case kGrantedShared:
      // A read hold granted with the report is simply released, and the report goes with it: the
      // readers granted beside it were not told either, and a reader could not repair the data
      // (turning the hold back into the ended writer's would take back their reads).
      unlock_shared();
      return;
    case kGrantedUpgradable:
      // The same as a read hold.
      unlock_upgradable(self);
      return;
    default:
      return;
  }
}

const WaitSite RwLockWords::kWaitSite{"rwlock", &key_is_address, &RwLockWords::holder_at,
                                      &RwLockWords::recover_from_ended_owner};

ThreadId RwLockWords::holder_at(const void* address) noexcept {
  const RwLockWords words(const_cast<std::int32_t*>(static_cast<const std::int32_t*>(address)));
  return (words.state().load(std::memory_order_relaxed) & (kWriter | kUpgradable)) != 0
             ? words.owner().load(std::memory_order_relaxed)
             : kNoThread;
}

bool RwLockWords::cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept {
  bool removed = false;
  with_release_grant(0, kNoThread, [&](const parking_lot::Grant& on_leave) {
    removed = parking_lot::cancel(
        waiter, [&](const void*) { return &on_leave; }, deferred);
  });
  return removed;
}

}  // namespace parklock
