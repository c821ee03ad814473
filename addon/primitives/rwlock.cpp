// The RWLock protocol over the words laid out in rwlock.h.
//
// Who writes what:
//   - A newcomer acquires only when the parked bit is clear: a writer by CAS 0 -> writer and then
//     storing its id in the owner word; a reader by CAS adding one reader while there is no
//     writer and no drain; an upgradable reader by CAS adding the upgradable bit and one reader
//     while there is no writer, no drain and no upgradable holder, and then storing its id. So
//     once anybody waits, readers stop barging in and a writer cannot be starved.
//   - A writer that finds readers alone holding the lock and nobody parked sets the draining bit
//     (CAS) and becomes the draining writer (below) at once: readers arriving after it wait for
//     it, where spinning without a mark let them keep the lock held as long as they kept coming.
//   - A thread that must wait sets the parked bit (CAS) and parks while the word still reads
//     "held, parked" (checked under the bucket lock).
//   - A named holder (writer or upgradable) releases by clearing the owner word FIRST and then
//     CAS its bits away, so a holder that acquires right after never has its id overwritten. A
//     reader releases by CAS subtracting one reader; the last reader of a parked lock, and every
//     reader during a drain, take the slow path.
//   - The release of a parked lock runs under the bucket lock and hands the lock over in FIFO
//     order (parking_lot::unpark_filter): the oldest waiter if it is a writer, or the run of
//     readers at the head of the queue up to the first writer, which may include one upgradable
//     reader if none holds the lock (the owner word is set for a named holder). A writer at the
//     head is granted the lock if it is free, and otherwise, beside plain readers only, the drain
//     (kGrantedDrain): it becomes the draining writer and waits on the drain key. The state word
//     is updated for them before they wake, and the parked bit is kept exactly when waiters
//     remain. Every wake-up is a grant but one (next).
//   - Barging. When the lock becomes free and a writer heads the queue, the release frees the
//     word (parked bit included) and only wakes that writer to compete (kCompete), unless the
//     bucket's fairness timer says its turn is due (parking_lot::FairTurn, about once a
//     millisecond), when it is handed the lock as above. A hand-off at every release leaves the
//     lock idle for a whole wake-up while the releaser, which wants it again at once, waits too:
//     writers contending took 0.12x (2 workers) down to 0.004x (8) a Mutex's throughput on 2
//     cores (bench scenario rwlock_write). The competitor takes the lock past the parked bit and
//     sets it, or marks the lock and queues again (without draining readers it finds, which
//     would not mark it): the waiters behind it are its to announce, and one that gives the
//     wake-up up takes the lock with the bit and releases it, or marks it
//     (pass_on_competition()). While it is on its way the queue is not empty and the parked bit
//     is clear: newcomers may take the lock outside any grant step, so a departure that finds the
//     bit clear grants nothing and leaves the word alone. Readers are always granted: a run of
//     them takes the lock together, and a reader that could barge past a queued writer would
//     starve it.
//   - A waiter that leaves the queue without a grant (timeout, interrupt, cancelled async wait)
//     runs the same grant step with nothing released, in the critical section of its departure
//     (parking_lot::Grant): it clears a parked bit nobody needs any more and grants the new head
//     of the queue what is now grantable.
//
// Why a grant never acts on a stale word. It decides under the bucket lock, and what can change
// the word outside that lock meanwhile never undoes a decision: a plain reader leaving on the fast
// path (a writer refused beside readers was given the drain, which holds for any number of
// readers, none included), a newcomer setting the parked bit, a writer setting the draining bit
// (only while the parked bit is clear, and a grant's own step clears that bit last), and, while
// the draining bit is set (which refuses every grant), the readers leaving and the draining writer
// taking the lock.
//
// The drain. At most one writer drains: the upgradable holder turning its hold into the write
// lock, the writer granted the drain, or a writer that found readers alone and nobody parked
// (begin_drain()). No writer can come between (it would need a free lock)
// and no reader joins: it waits only for the read holds already there. Its key is the owner word
// (drain_key()); the reader release that leaves it with the readers it waits for (its own hold,
// for the upgrader; none, for the other) wakes it (kReadersLeft), and it takes the lock with one
// CAS. The upgrader sets the draining bit itself; while the parked bit is set that CAS runs under
// the bucket lock, so that no grant admits readers behind it. A grant gives the drain only where
// no upgradable hold is, so the two never meet. A draining writer that gives up clears the bit and,
// in the same step, grants the waiters it kept out.
//
// Owner death: see rwlock_owner_death.cpp. In memory other processes share, nobody grants: see
// rwlock_across_processes.cpp.
//
// Self-deadlock: any blocking acquisition by the thread holding the write lock or the upgradable
// read lock is refused (kAlreadyHeld) where it would have to wait, also when one of its own
// asynchronous waits is granted the write lock while the thread blocks waiting for it (a blocked
// wait in a thread with an interrupt watches for that). lock() while this thread holds a plain
// read lock waits forever and is NOT detected: readers are counted, not recorded per thread; and
// so is an upgrade while this thread also holds a plain read lock. For the same reason
// unlock_shared() can only refuse a release when no reader at all holds the lock.
#include "primitives/rwlock.h"

#include <algorithm>
#include <optional>

#include "lot/owner_death.h"
#include "primitives/lock_wait.h"
#include "primitives/rwlock_steps.h"
#include "primitives/spin.h"

namespace parklock {

Attempt RwLockWords::try_acquire_or_mark(Mode mode, ThreadId self, std::int32_t seen, bool woken) {
  if (is_corrupt(seen)) return Attempt::kCorrupt;
  const std::int32_t past = woken ? kParked : 0;
  if (available(mode, seen & ~past)) {
    const std::int32_t mine = (mode == Mode::kExclusive ? kWriter
                               : mode == Mode::kShared  ? seen + kOneReader
                                                        : seen + kUpgradable + kOneReader) |
                              past;
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

RwLockWords::UnlockStatus RwLockWords::release_write(ThreadId self, std::int32_t keep) noexcept {
  const std::int32_t seen = state().load(std::memory_order_relaxed);
  if (owner().load(std::memory_order_relaxed) != self) {
    return is_corrupt(seen) ? UnlockStatus::kCorrupt : UnlockStatus::kNotOwner;
  }
  // Named as the upgradable reader: a read hold, not the write lock.
  if ((seen & kUpgradable) != 0 && !is_corrupt(seen)) return UnlockStatus::kNotOwner;
  if (is_corrupt(seen)) return UnlockStatus::kCorrupt;
  // Named as the writer that drains, in a region: it does not hold the lock yet.
  if ((seen & (kWriter | kDraining)) == kDraining) return UnlockStatus::kNotOwner;
  // Named as the writer by a state without a writer: left as found, for diagnosis.
  if ((seen & kWriter) == 0) return UnlockStatus::kCorrupt;
  owner().store(kNoThread, std::memory_order_relaxed);
  std::int32_t expected = kWriter;
  if (state().compare_exchange_strong(expected, keep, std::memory_order_release,
                                      std::memory_order_relaxed)) {
    return UnlockStatus::kUnlocked;
  }
  return keep == 0 ? release_exclusive_slow() : release_parked_downgrade();
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
    if (in_region()) {
      release_in_region(kOneReader);
      return UnlockStatus::kUnlocked;
    }
    // During a drain nothing is granted: the lock goes to the draining writer.
    if (readers_of(seen) == 1 && (seen & (kParked | kDraining)) == kParked) break;
    if (state().compare_exchange_weak(seen, seen - kOneReader, std::memory_order_release,
                                      std::memory_order_relaxed)) {
      if ((seen & kDraining) != 0 && readers_of(seen) == drained_readers(seen) + 1) {
        parking_lot::unpark_some(drain_key(), 1, kReadersLeft);
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

void RwLockWords::release_and_grant(std::int32_t released, ThreadId ended,
                                    parking_lot::Wakeups* deferred) noexcept {
  // (A recovery, the only caller with an `ended` writer, never comes here for a region lock.)
  if (in_region()) {
    release_in_region(released, deferred);
    return;
  }
  const bool drained = with_release_grant(released, ended, [&](const parking_lot::Grant& grant) {
    parking_lot::unpark_filter(address(), grant, deferred);
  });
  // A read hold released here may be the last one a drain waited for: the drain can begin between
  // a reader's look at the word and this step. (Never with `deferred`: only end_drain() passes
  // it, and the drain is over then.)
  if (drained) parking_lot::unpark_some(drain_key(), 1, kReadersLeft);
}

bool RwLockWords::with_release_grant(std::int32_t released, ThreadId ended,
                                     FunctionRef<void(const parking_lot::Grant&)> run) noexcept {
  // Decided on the word as first read under the bucket lock (see "Why a grant never acts on a
  // stale word" above); the final update re-reads it.
  std::optional<std::uint32_t> free_of_us;  // the state without the parked bit and `released`
  std::uint32_t granted_readers = 0;        // the upgradable reader included
  ThreadId granted_writer = kNoThread;
  bool woke_competitor = false;  // the lock is freed, and its oldest waiter woken to compete
  parking_lot::FairTurn turn{kCompete};
  ThreadId granted_upgrader = kNoThread;
  bool granted_drain = false;
  bool drained = false;
  const auto without_us = [&](std::int32_t word) {
    return (static_cast<std::uint32_t>(word) & ~static_cast<std::uint32_t>(kParked)) -
           static_cast<std::uint32_t>(released);
  };
  // The first grant reports the ended writer (if any): that waiter is the one that takes over.
  const auto reported = [&](WakeToken token) {
    return granted_readers == 0 && granted_writer == kNoThread ? with_ended_owner(token, ended)
                                                               : token;
  };
  // A departure from a queue whose word does not say so owes nothing: a competitor is on its way
  // (see "Barging"), which will mark the lock or take it, and meanwhile newcomers may take the
  // lock outside this step, which must therefore leave the word alone.
  bool owes_nothing = false;
  const auto grant = [&](std::int64_t request) -> std::optional<WakeToken> {
    if (!free_of_us) {
      const std::int32_t word = state().load(std::memory_order_relaxed);
      owes_nothing = released == 0 && (word & kParked) == 0;
      free_of_us = without_us(word);
    }
    const std::uint32_t base = *free_of_us;
    if (owes_nothing || granted_writer != kNoThread || granted_drain || woke_competitor ||
        (base & (kWriter | kDraining)) != 0) {
      return std::nullopt;
    }
    const bool reader_fits =
        (base >> kReaderShift) + granted_readers < static_cast<std::uint32_t>(kMaxReaders);
    if (request == kSharedRequest) {
      if (!reader_fits) return std::nullopt;
      const WakeToken token = reported(kGrantedShared);
      ++granted_readers;
      return token;
    }
    if (request < 0) {
      // An upgradable reader: beside readers, but not beside another upgradable one.
      const std::int64_t thread = -1 - request;
      if ((base & kUpgradable) != 0 || granted_upgrader != kNoThread || !reader_fits ||
          thread <= 0 || thread > std::numeric_limits<ThreadId>::max()) {
        return std::nullopt;
      }
      const WakeToken token = reported(kGrantedUpgradable);
      ++granted_readers;
      granted_upgrader = static_cast<ThreadId>(thread);
      return token;
    }
    // A writer only as the first grant: the lock if it is free, the drain beside plain readers.
    if (granted_readers != 0 || request <= 0 || request > std::numeric_limits<ThreadId>::max()) {
      return std::nullopt;
    }
    if (base == 0) {
      // Barging (see "Barging" above): unless its fair turn is due, the writer is only woken, and
      // running threads may take the lock first. A recovery always hands the lock on, with its
      // report.
      if (ended == kNoThread && !turn.be_fair) {
        woke_competitor = true;
        return kCompete;
      }
      const WakeToken token = reported(kGrantedExclusive);
      granted_writer = static_cast<ThreadId>(request);
      return token;
    }
    if ((base & kUpgradable) != 0) return std::nullopt;
    granted_drain = true;
    return kGrantedDrain;
  };
  const auto finish = [&](bool queue_empty) {
    if (owes_nothing) return;
    const bool granted = granted_readers != 0 || granted_writer != kNoThread || granted_drain;
    // A recovery that granted nothing (the waiters left meanwhile) must not free the lock: the
    // write hold stays the ended writer's, to be taken over by the next thread that wants it.
    const bool keep_ended = ended != kNoThread && !granted;
    // The writer bit stays set (or goes from readers to writer) in one step with this store, and
    // the owner word is written before it: no other writer can be between.
    if (granted_writer != kNoThread) owner().store(granted_writer, std::memory_order_relaxed);
    if (granted_upgrader != kNoThread) owner().store(granted_upgrader, std::memory_order_relaxed);
    if (keep_ended) owner().store(ended, std::memory_order_relaxed);
    std::int32_t seen = state().load(std::memory_order_relaxed);
    for (;;) {
      std::uint32_t next = without_us(seen) + (granted_readers << kReaderShift);
      if (granted_writer != kNoThread || keep_ended) next |= kWriter;
      if (granted_upgrader != kNoThread) next |= kUpgradable;
      if (granted_drain) next |= kDraining;
      // The competitor marks the lock again as it takes it or queues, so the free lock never
      // shows the parked bit.
      if (!queue_empty && !woke_competitor) next |= kParked;
      if (state().compare_exchange_weak(seen, static_cast<std::int32_t>(next),
                                        std::memory_order_acq_rel, std::memory_order_relaxed)) {
        const auto word = static_cast<std::int32_t>(next);
        drained = (word & kDraining) != 0 && readers_of(word) == drained_readers(word);
        return;
      }
    }
  };
  const FunctionRef<std::optional<WakeToken>(std::int64_t)> offer = grant;
  run(parking_lot::Grant{&offer, finish, &turn});
  return drained;
}

Outcome RwLockWords::lock_or_enqueue(ThreadId self, Waiter& waiter, ThreadId* ended_owner,
                                     Deadline deadline, bool woken) {
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
    // Held, and nobody parked yet: the holder may be about to release. But the spin does not keep
    // readers out, only the parked bit does: a writer refused by read holds spins only the short
    // pause rounds, never the yields. Readers that keep arriving keep the lock held through any
    // spin, and each yield can give the core away for a whole time slice on a busy machine, so
    // yielding there only delayed the parked bit, and the writer, without bound.
    // (In a region such a writer drains at once, before it comes here.)
    const int limit = mode == Mode::kExclusive && (seen & kWriter) == 0 && !in_region()
                          ? std::min(spin_limit, spin_policy().pause_rounds)
                          : spin_limit;
    if (spins < limit && !available(mode, seen) && (seen & kParked) == 0 && !is_corrupt(seen)) {
      spin_pause(spins++);
      continue;
    }
    const Attempt attempt = try_acquire_or_mark(mode, self, seen, woken);
    if (attempt == Attempt::kRetry) continue;
    if (attempt == Attempt::kAcquired) return Outcome::kAcquired;
    if (attempt == Attempt::kCorrupt) return Outcome::kCorrupt;
    // Never wait for a writer that has ended: take the lock over and report it. The parked bit
    // is set now and stays, so the release of the lock taken over still serves the waiters.
    if (take_from_ended_owner(mode, self, ended_owner)) return Outcome::kOwnerDied;
    if (release_ended_upgrader(self)) continue;
    if (end_ended_drain(self)) continue;
    if (deadline.expired()) {
      release_and_grant(0);  // the parked bit this waiter may have set is nobody's business now
      return Outcome::kTimedOut;
    }
    if (parking_lot::enqueue(address(), waiter, must_wait, &kWaitSite)) return Outcome::kPending;
  }
}

void RwLockWords::pass_on_competition(ThreadId self) noexcept {
  for (;;) {
    switch (try_acquire_or_mark(Mode::kExclusive, self, state().load(std::memory_order_relaxed),
                                /*woken=*/true)) {
      case Attempt::kAcquired:
        unlock(self);
        return;
      case Attempt::kRetry:
        continue;
      case Attempt::kContended:
      case Attempt::kCorrupt:
        return;
    }
  }
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
    case kCompete:
      pass_on_competition(self);
      return;
    default:
      return;
  }
}

const WaitSite RwLockWords::kWaitSite{"rwlock", &key_is_address, &RwLockWords::holder_at,
                                      &RwLockWords::recover_from_ended_owner,
                                      &RwLockWords::look_again};

ThreadId RwLockWords::holder_at(const void* address) noexcept {
  const RwLockWords words(const_cast<std::int32_t*>(static_cast<const std::int32_t*>(address)));
  // A drain names its writer only in a region: elsewhere the owner word is then 0.
  return (words.state().load(std::memory_order_relaxed) & (kWriter | kUpgradable | kDraining)) != 0
             ? words.owner().load(std::memory_order_relaxed)
             : kNoThread;
}

bool RwLockWords::cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept {
  // In a region a departure grants nothing, but the waiters look again: the mark it leaves may
  // keep readers out (rwlock_across_processes.cpp).
  if (in_region()) {
    if (!parking_lot::cancel(
            waiter, [](const void*) -> const parking_lot::Grant* { return nullptr; }, deferred)) {
      return false;
    }
    wake_to_look_again(address(), deferred);
    return true;
  }
  bool removed = false;
  with_release_grant(0, kNoThread, [&](const parking_lot::Grant& on_leave) {
    removed = parking_lot::cancel(
        waiter, [&](const void*) { return &on_leave; }, deferred);
  });
  return removed;
}

}  // namespace parklock
