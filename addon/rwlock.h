// A readers-writer lock (shared/exclusive, with an upgradable read lock) in two 32-bit words of
// caller-owned (possibly shared) memory, fair between readers and writers.
//
// Shared-memory layout (kBytes = 8, kAlign = 4; all zero is an unlocked lock):
//
//   word  bits   field       values
//   ----  -----  ----------  -------------------------------------------------------------------
//   [0]   0      writer      1: a writer holds the lock (then nothing else below is set but parked)
//         1      parked      1: waiters may be queued; from then on nobody takes the lock except
//                            through a grant made under the bucket lock, and the release that
//                            frees the lock takes the slow path
//         2      upgradable  1: one thread holds the upgradable read lock, which is also one of
//                            the read holds counted below
//         3      upgrading   1: the upgradable holder waits for the other readers to leave, to
//                            turn its hold into the write lock; no reader joins meanwhile
//         4..30  readers     how many read holds are outstanding, 0 to kMaxReaders
//         31     -           always 0
//   [1]   0..31  owner       the ThreadId of the writer, or of the upgradable holder, while it
//                            holds the lock; 0 otherwise
//
// Values never written, reported as corrupt: a negative state; the writer bit together with a
// reader count, the upgradable bit or the upgrading bit; the upgradable bit without a reader;
// the upgrading bit without the upgradable bit; and "parked" alone (a free lock with waiters: the
// release that frees a lock always grants it to the oldest waiter in the same step).
//
// Who writes what:
//   - A newcomer acquires only when the parked bit is clear: a writer by CAS 0 -> writer and then
//     storing its id in the owner word; a reader by CAS adding one reader while there is no
//     writer and no upgrade in progress; an upgradable reader by CAS adding the upgradable bit
//     and one reader while there is no writer and no upgradable holder, and then storing its id.
//     So once anybody waits, readers stop barging in and a writer cannot be starved.
//   - A thread that must wait sets the parked bit (CAS) and parks while the word still reads
//     "held, parked" (checked under the bucket lock).
//   - A named holder (writer or upgradable) releases by clearing the owner word FIRST and then
//     CAS its bits away, so a holder that acquires right after never has its id overwritten. A
//     reader releases by CAS subtracting one reader, unless it is the last reader and the parked
//     bit is set, or an upgrade is in progress.
//   - The release of a parked lock runs under the bucket lock and hands the lock over in FIFO
//     order (parking_lot::unpark_filter): the oldest waiter if it is a writer and the lock is
//     free (its owner word is set for it), or the run of readers at the head of the queue up to
//     the first writer, which may include one upgradable reader if none holds the lock (its
//     owner word is set for it too). The state word is updated for them before they wake, and
//     the parked bit is kept exactly when waiters remain. Waking is therefore never a race to
//     re-acquire: every wake-up is a grant (kGrantedShared / kGrantedExclusive /
//     kGrantedUpgradable). Its own hold still counts while such a release decides, so the other
//     readers may all leave on the fast path meanwhile; where that would leave the lock free
//     with its waiters refused, the release takes no effect and decides again.
//   - A waiter that leaves the queue without a grant (timeout, interrupt, cancelled async wait)
//     runs the same grant step with nothing released, in the critical section of its departure
//     (parking_lot::Grant): it clears a parked bit nobody needs any more
//     and grants the new head of the queue what is now grantable (readers behind a writer that
//     gave up join the readers holding the lock).
//
// Upgrading. Only the upgradable holder turns its hold into the write lock, and no writer can
// come first (a writer needs a free lock, and this read hold keeps it taken): so the upgrade only
// waits for the other readers. When it is the only reader, one CAS makes it the writer. Otherwise
// it sets the upgrading bit, which stops readers from joining (and grants from admitting them),
// and waits on its own queue, keyed by the owner word (upgrade_key()): the reader release that
// leaves it alone wakes it (a reader release sees the bit, so it takes the slow path). While the
// parked bit is set, the upgrade's CAS runs under the bucket lock, so it never comes between a
// grant's decision and its update. An upgrade that gives up clears the bit and lets in the
// readers the bit kept out.
//
// Owner death (owner_death.h), named holders only. A state with the writer bit whose owner word
// names a thread that has ended is still held: nothing else could tell the next holder that the
// data may be half-updated. Whoever finds it on the slow path, in any mode, takes it over and
// reports kOwnerDied: a writer or upgradable reader by one CAS of the owner word ended -> self; a
// reader by one CAS of the owner word ended -> 0, which alone makes it the claimant (no writer
// can take a state with the writer bit, and nobody else writes the owner word of a held lock);
// then a reader or an upgradable reader turns the writer bit into its read hold, keeping the
// parked bit. Every claim CASes the owner word, so exactly one thread takes over. With waiters
// queued when the thread ends, recover_from_ended_owner() claims the owner word the same way and
// releases the write hold to the oldest waiters, the first of which gets a grant carrying the
// ended owner; if the queue emptied meanwhile, the writer bit stays and the owner word names the
// ended thread again, for the next acquirer to find. A writer that gives such a grant away puts
// the ended owner back and recovers again, so the report is never lost (a reader giving one away
// just releases its hold). An upgradable read hold whose thread ended is released (a read hold
// changed nothing), by whoever finds it on the slow path or by the end of that thread. Plain read
// holds are not recorded per thread, so a reader that ends holding one is not detected.
//
// Self-deadlock: any blocking acquisition by the thread holding the write lock or the upgradable
// read lock is refused (kAlreadyHeld) where it would have to wait, also when one of its own
// asynchronous waits is granted the write lock while the thread blocks waiting for it (a blocked
// wait in a thread with an interrupt watches for that). lock() while this thread holds a plain
// read lock waits forever and is NOT detected: readers are counted, not recorded per thread; and
// so is an upgrade while this thread also holds a plain read lock. For the same reason
// unlock_shared() can only refuse a release when no reader at all holds the lock.
//
// JavaScript runs the fast paths itself with Atomics on the same words (lib/rwlock.js, its word
// steps in lib/rwlock_words.js), using the layout constants the binding exports.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <system_error>

#include "atomic_ref.h"
#include "deadline.h"
#include "function_ref.h"
#include "int32_words.h"
#include "lock_wait.h"
#include "parking_lot.h"
#include "thread_id.h"
#include "wait_step.h"

namespace parklock {

class RwLockWords : public Int32Words<2> {
 public:
  static constexpr std::size_t kStateIndex = 0;
  static constexpr std::size_t kOwnerIndex = 1;
  static constexpr std::int32_t kWriter = 1;
  static constexpr std::int32_t kParked = 2;
  static constexpr std::int32_t kUpgradable = 4;
  static constexpr std::int32_t kUpgrading = 8;
  static constexpr int kReaderShift = 4;
  static constexpr std::int32_t kOneReader = 1 << kReaderShift;
  static constexpr std::int32_t kMaxReaders =
      std::numeric_limits<std::int32_t>::max() >> kReaderShift;

  // What a waiter asks for (Waiter::request()): a shared hold; an exclusive one for the thread
  // whose ThreadId (always positive) is the request, or an upgradable one for the thread whose
  // ThreadId is -1 - request, so that a grant can record the owner; or, on upgrade_key(), the
  // upgrade of the upgradable hold.
  static constexpr std::int64_t kSharedRequest = -1;
  static constexpr std::int64_t kUpgradeRequest = 0;
  static constexpr std::int64_t exclusive_request(ThreadId thread) noexcept { return thread; }
  static constexpr std::int64_t upgradable_request(ThreadId thread) noexcept {
    return -1 - std::int64_t{thread};
  }

  // Tokens a waiter receives: the lock was handed to it in the requested mode, or (the upgrader)
  // the other readers have left.
  enum Wake : WakeToken {
    kGrantedShared = 3 * kTokenSpaceSize,
    kGrantedExclusive,
    kGrantedUpgradable,
    kUpgradeReady
  };

  // kOwnerDied: acquired (in the requested mode), and the previous writer had ended holding the
  // lock. Wherever it is returned, `*ended_owner` (if given) is set to that writer.
  using LockStatus = parklock::LockStatus;
  enum class UnlockStatus { kUnlocked, kNotOwner, kCorrupt };
  enum class Mode { kShared, kExclusive, kUpgradable };

  static constexpr bool is_corrupt(std::int32_t state) noexcept {
    return state < 0 ||
           ((state & kWriter) != 0 &&
            (readers_of(state) != 0 || (state & (kUpgradable | kUpgrading)) != 0)) ||
           ((state & kUpgradable) != 0 && readers_of(state) == 0) ||
           ((state & (kUpgradable | kUpgrading)) == kUpgrading) || state == kParked;
  }
  // Shifted as unsigned: a (corrupt) negative word reads as more than kMaxReaders readers, so no
  // fast path that checks the count against kMaxReaders ever acts on it.
  static constexpr std::int32_t readers_of(std::int32_t state) noexcept {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(state) >> kReaderShift);
  }
  // Held in either mode (what the parked bit alone does not mean).
  static constexpr bool is_held(std::int32_t state) noexcept { return (state & ~kParked) != 0; }

  explicit RwLockWords(std::int32_t* words) noexcept : words_(words) {}

  // --- Exclusive (write) side ---

  bool try_lock(ThreadId self) noexcept {
    std::int32_t expected = 0;
    if (!state().compare_exchange_strong(expected, kWriter, std::memory_order_acquire,
                                         std::memory_order_relaxed)) {
      return false;
    }
    owner().store(self, std::memory_order_relaxed);
    return true;
  }

  LockStatus lock(ThreadId self, Deadline deadline = Deadline::never(),
                  ThreadId* ended_owner = nullptr) {
    if (try_lock(self)) return LockStatus::kAcquired;
    return lock_slow(self, deadline, ended_owner);
  }

  UnlockStatus unlock(ThreadId self) noexcept { return release_write(self, 0); }

  // The contended part of lock(): the caller's try_lock failed. `self` must be the calling thread's
  // current_thread_id() (a grant records the identity of the thread that parked).
  // kInterrupted: the thread's interrupt (interrupt.h) was requested.
  LockStatus lock_slow(ThreadId self, Deadline deadline, ThreadId* ended_owner = nullptr);

  // The contended part of unlock(), after the holder has checked and cleared the owner word: the
  // writer bit is released, and the lock handed on if waiters are parked.
  UnlockStatus release_exclusive_slow() noexcept;

  // Turns the write hold of `self` into one read hold, atomically: no writer can come between,
  // and readers queued at the head (up to the first queued writer) are granted at once to read
  // beside it. The caller then releases with unlock_shared().
  UnlockStatus downgrade(ThreadId self) noexcept;

  // --- Shared (read) side ---

  bool try_lock_shared() noexcept {
    std::int32_t seen = state().load(std::memory_order_relaxed);
    // An upgradable bit without its read hold is corrupt: left to the slow path, which says so.
    while ((seen & (kWriter | kParked | kUpgrading)) == 0 && readers_of(seen) < kMaxReaders &&
           ((seen & kUpgradable) == 0 || readers_of(seen) != 0)) {
      if (state().compare_exchange_weak(seen, seen + kOneReader, std::memory_order_acquire,
                                        std::memory_order_relaxed)) {
        return true;
      }
    }
    return false;
  }

  LockStatus lock_shared(ThreadId self, Deadline deadline = Deadline::never(),
                         ThreadId* ended_owner = nullptr) {
    if (try_lock_shared()) return LockStatus::kAcquired;
    return lock_shared_slow(self, deadline, ended_owner);
  }

  UnlockStatus unlock_shared() noexcept {
    // The fast path never releases the last read hold of a parked lock (that one hands it on), nor
    // a hold an upgrade waits for (that one may have to wake the upgrader).
    std::int32_t seen = state().load(std::memory_order_relaxed);
    if (seen > 0 && (seen & (kWriter | kUpgrading)) == 0 &&
        (readers_of(seen) > 1 || seen == kOneReader)) {
      if (state().compare_exchange_strong(seen, seen - kOneReader, std::memory_order_release,
                                          std::memory_order_relaxed)) {
        return UnlockStatus::kUnlocked;
      }
    }
    return unlock_shared_slow();
  }

  LockStatus lock_shared_slow(ThreadId self, Deadline deadline, ThreadId* ended_owner = nullptr);

  // The full release of one read hold: kNotOwner when no reader holds the lock, or when the only
  // one left is the upgradable read hold.
  UnlockStatus unlock_shared_slow() noexcept;

  // --- Upgradable read side: one holder at a time, beside plain readers ---

  bool try_lock_upgradable(ThreadId self) noexcept {
    std::int32_t seen = state().load(std::memory_order_relaxed);
    while ((seen & (kWriter | kParked | kUpgradable | kUpgrading)) == 0 &&
           readers_of(seen) < kMaxReaders) {
      if (state().compare_exchange_weak(seen, seen + kUpgradable + kOneReader,
                                        std::memory_order_acquire, std::memory_order_relaxed)) {
        owner().store(self, std::memory_order_relaxed);
        return true;
      }
    }
    return false;
  }

  LockStatus lock_upgradable(ThreadId self, Deadline deadline = Deadline::never(),
                             ThreadId* ended_owner = nullptr) {
    if (try_lock_upgradable(self)) return LockStatus::kAcquired;
    return lock_upgradable_slow(self, deadline, ended_owner);
  }

  LockStatus lock_upgradable_slow(ThreadId self, Deadline deadline,
                                  ThreadId* ended_owner = nullptr);

  // kNotOwner: `self` does not hold the upgradable read lock, or an upgrade of it is under way.
  UnlockStatus unlock_upgradable(ThreadId self) noexcept;

  // The contended part of unlock_upgradable(), after the holder has checked and cleared the owner
  // word: the upgradable read hold is given back, and the lock handed on if waiters are parked.
  UnlockStatus release_upgradable_slow() noexcept;

  // Turns the upgradable read hold of `self` into the write lock (kAcquired), waiting (until
  // `deadline`) for the other readers to leave. On kTimedOut and kInterrupted the upgradable hold
  // stays. kNotOwner: `self` does not hold the upgradable read lock, or an upgrade of it is
  // already under way.
  Outcome upgrade(ThreadId self, Deadline deadline = Deadline::never()) {
    if (try_upgrade(self)) return Outcome::kAcquired;
    return upgrade_slow(self, deadline);
  }

  // The upgrade when `self` is the only reader and nobody is parked: one CAS.
  bool try_upgrade(ThreadId self) noexcept {
    if (owner().load(std::memory_order_relaxed) != self) return false;
    std::int32_t expected = kUpgradable | kOneReader;
    return state().compare_exchange_strong(expected, kWriter, std::memory_order_acquire,
                                           std::memory_order_relaxed);
  }

  Outcome upgrade_slow(ThreadId self, Deadline deadline);

  // The upgrade protocol, one step, for `self`: upgrades now (kAcquired), or marks the upgrade and
  // queues `waiter` on upgrade_key(), whose wake-up (kUpgradeReady) means "look again"
  // (kPending); kTimedOut (the mark cleared) once `deadline` has passed; kNotOwner if `self` does
  // not hold the upgradable read lock; kCorrupt.
  Outcome upgrade_or_enqueue(ThreadId self, Waiter& waiter, Deadline deadline = Deadline::never());

  // The upgrade as a WaitStep (wait_step.h), blocking or Promise.
  class UpgradeStep;

  // An upgrade that gives up (its deadline, an interrupt, a cancelled asynchronous upgrade):
  // clears the upgrading bit and, if `grant` and waiters are parked, lets in the readers it kept
  // out. A thread being torn down passes `grant` false: its upgradable hold is released as the
  // hold of an ended thread, which grants then.
  void end_upgrade_wait(bool grant = true) noexcept;

  // Where the upgrader waits: the owner word, a key of its own.
  const void* upgrade_key() const noexcept { return words_ + kOwnerIndex; }

  // --- Lock waits and giving up ---

  // The lock protocol, one step, for `self` in the mode `waiter.request()` names (kSharedRequest,
  // exclusive_request(self) or upgradable_request(self)): acquires now (kAcquired;
  // kOwnerDied from a writer that ended), or queues `waiter`, whose one wake-up is then the grant
  // (kPending); kTimedOut once `deadline` has passed (nothing left marked for it); kCorrupt.
  // Spins first only for a blocking waiter; never sleeps.
  Outcome lock_or_enqueue(ThreadId self, Waiter& waiter, ThreadId* ended_owner = nullptr,
                          Deadline deadline = Deadline::never());

  // A lock wait in one Mode as a WaitStep (wait_step.h), blocking or Promise.
  class LockStep;

  // A waiter that received `token` but no longer wants the lock (timed out, cancelled, its thread
  // is gone) releases what it was granted, which hands the lock on to the next waiters; a write
  // grant that carries an ended owner goes back to that owner and is recovered again.
  void abandon_wake(ThreadId self, WakeToken token) noexcept;

  // --- Owner death ---

  // A try-lock that found the lock taken: takes it over in `mode` if its writer has ended (true,
  // with the ended writer in `*ended_owner`). Never waits.
  bool take_from_ended_owner(Mode mode, ThreadId self, ThreadId* ended_owner) noexcept;

  // A thread that found the lock taken: if the upgradable read lock is held by a thread that has
  // ended, releases that hold (true: look at the lock again). Never waits.
  bool release_ended_upgrader(ThreadId self) noexcept;

  // A try-lock in `mode` whose fast path found the lock taken: kOwnerDied if it took the lock over
  // from an ended writer (`*ended_owner` names it), kAcquired if it took it once an ended
  // upgrader's hold was released, else kTimedOut (not acquired). Never waits.
  Outcome try_lock_from_ended(Mode mode, ThreadId self, ThreadId* ended_owner) noexcept;

  // The WaitSite::recover of RWLock waiters: `address` is the state word. If the thread `ended`
  // holds the write lock there and waiters are parked, grants the lock to the oldest of them; if
  // it holds the upgradable read lock, releases that hold.
  static void recover_from_ended_owner(const void* address, ThreadId ended) noexcept;

  // Takes a queued asynchronous waiter out of the queue (false if its grant is already on its
  // way); in the same critical section, clears the parked bit if nobody waits any more and grants
  // the new head of the queue what is now grantable.
  bool cancel(Waiter& waiter, parking_lot::Wakeups* deferred = nullptr) noexcept;

  // --- Observers (snapshots) ---

  bool is_locked() const noexcept { return is_held(state().load(std::memory_order_relaxed)); }
  bool is_write_locked() const noexcept {
    return (state().load(std::memory_order_relaxed) & kWriter) != 0;
  }
  std::int32_t readers() const noexcept {
    return readers_of(state().load(std::memory_order_relaxed));
  }
  ThreadId writer() const noexcept {
    return is_write_locked() ? owner().load(std::memory_order_relaxed) : kNoThread;
  }
  ThreadId upgrader() const noexcept {
    return (state().load(std::memory_order_relaxed) & kUpgradable) != 0
               ? owner().load(std::memory_order_relaxed)
               : kNoThread;
  }
  // Who holds the lock whose state word is at `address` (WaitSite::holder): the writer, or the
  // upgradable reader; plain readers are counted, not named.
  static ThreadId holder_at(const void* address) noexcept;
  // The sites of RWLock waiters (parking_lot.h): the lock's queue, and the upgrader's.
  static const WaitSite kWaitSite;
  static const WaitSite kUpgradeSite;
  const void* address() const noexcept { return words_ + kStateIndex; }

 private:
  atomic_ref<std::int32_t> state() const noexcept {
    return atomic_ref<std::int32_t>(words_[kStateIndex]);
  }
  atomic_ref<std::int32_t> owner() const noexcept {
    return atomic_ref<std::int32_t>(words_[kOwnerIndex]);
  }

  // Holds the write lock or the upgradable read lock (the owner word names only those holders).
  bool is_named_holder(ThreadId self) const noexcept {
    return (state().load(std::memory_order_relaxed) & (kWriter | kUpgradable)) != 0 &&
           owner().load(std::memory_order_relaxed) == self;
  }
  bool holds_upgradable(ThreadId self) const noexcept {
    const std::int32_t seen = state().load(std::memory_order_relaxed);
    return (seen & kUpgradable) != 0 && !is_corrupt(seen) &&
           owner().load(std::memory_order_relaxed) == self;
  }
  // Whether a newcomer may take the lock in `mode` now (never while anybody is parked).
  static constexpr bool available(Mode mode, std::int32_t seen) noexcept {
    if (mode == Mode::kExclusive) return seen == 0;
    const std::int32_t excluded = mode == Mode::kShared
                                      ? kWriter | kParked | kUpgrading
                                      : kWriter | kParked | kUpgradable | kUpgrading;
    return (seen & excluded) == 0 && readers_of(seen) < kMaxReaders;
  }
  // The upgrader's park condition, checked under its bucket lock: still marked, not alone.
  bool must_wait_for_readers() const noexcept {
    const std::int32_t seen = state().load(std::memory_order_relaxed);
    return (seen & kUpgrading) != 0 && readers_of(seen) > 1 && !is_corrupt(seen);
  }
  enum class UpgradeMark { kUpgraded, kMarked, kCorrupt };
  // Upgrades if the holder is the only reader, else sets the upgrading bit (under the bucket lock
  // while waiters are parked).
  UpgradeMark upgrade_or_mark() noexcept;
  // Gives back the upgradable read hold of the thread the owner word named (the caller has
  // cleared or claimed the owner word), with the upgrading bit if set.
  void release_upgradable_hold() noexcept;
  // The park condition, checked under the bucket lock: held, with waiters announced.
  bool must_wait() const noexcept {
    const std::int32_t seen = state().load(std::memory_order_relaxed);
    return (seen & kParked) != 0 && is_held(seen) && !is_corrupt(seen);
  }
  Attempt try_acquire_or_mark(Mode mode, ThreadId self, std::int32_t seen);

  // Gives up the write hold of `self`, keeping `keep` (0, or kOneReader for a downgrade): checks
  // ownership, clears the owner word FIRST (so a writer that acquires right after never has its id
  // overwritten), then one CAS writer -> keep, or the slow path if waiters are parked.
  UnlockStatus release_write(ThreadId self, std::int32_t keep) noexcept {
    const std::int32_t seen = state().load(std::memory_order_relaxed);
    if (owner().load(std::memory_order_relaxed) != self) {
      return is_corrupt(seen) ? UnlockStatus::kCorrupt : UnlockStatus::kNotOwner;
    }
    // Named as the upgradable reader: a read hold, not the write lock.
    if ((seen & kUpgradable) != 0 && !is_corrupt(seen)) return UnlockStatus::kNotOwner;
    // Named as the writer by a state without a writer: left as found, for diagnosis.
    if ((seen & kWriter) == 0 || is_corrupt(seen)) return UnlockStatus::kCorrupt;
    owner().store(kNoThread, std::memory_order_relaxed);
    std::int32_t expected = kWriter;
    if (state().compare_exchange_strong(expected, keep, std::memory_order_release,
                                        std::memory_order_relaxed)) {
      return UnlockStatus::kUnlocked;
    }
    return keep == 0 ? release_exclusive_slow() : release_parked_downgrade();
  }
  UnlockStatus release_parked_downgrade() noexcept;
  LockStatus acquire_slow(Mode mode, ThreadId self, Deadline deadline, ThreadId* ended_owner);
  // Under the bucket lock: gives back `released` (kWriter, kOneReader, kUpgradable + kOneReader
  // (with kUpgrading), 0, or kWriter - kOneReader for a downgrade) and grants the oldest
  // waiters what is then grantable, keeping the parked bit exactly when waiters remain. With an
  // `ended` writer (whose owner word the caller has claimed), the first grant carries it, and if
  // nothing is granted the write hold stays, with the owner word naming `ended` again.
  void release_and_grant(std::int32_t released, ThreadId ended = kNoThread) noexcept;
  // The grant step of release_and_grant(), handed to `run`, which must run it under the bucket
  // lock (parking_lot::unpark_filter, or a departing waiter's on_leave) at most once. False if
  // the step gave nothing back because its decisions went stale (see the definition): the caller
  // still holds `released` and runs the step again. Never false when `released` is 0.
  bool with_release_grant(std::int32_t released, ThreadId ended,
                          FunctionRef<void(const parking_lot::Grant&)> run) noexcept;

  std::int32_t* words_;
};

// A lock wait of `self` in `mode`. Every wake-up is a grant in that mode.
class RwLockWords::LockStep final : public WaitStep {
 public:
  LockStep(RwLockWords lock, Mode mode, ThreadId self) noexcept
      : lock_(lock), mode_(mode), self_(self) {}
  std::int64_t request() const override;
  Outcome start(Waiter& waiter) override;
  Outcome resume(Waiter& waiter, WakeToken token) override;
  void abandon(Waiter& waiter, WakeToken token) noexcept override;
  bool cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept override;
  std::optional<LockWatch> watch(const Waiter& waiter) const override;

 private:
  RwLockWords lock_;
  const Mode mode_;
  const ThreadId self_;
};

// The upgrade of the upgradable read hold of `self`. Each wake-up means "look again": the
// upgrader is the only waiter of its queue.
class RwLockWords::UpgradeStep final : public WaitStep {
 public:
  UpgradeStep(RwLockWords lock, ThreadId self) noexcept : lock_(lock), self_(self) {}
  std::int64_t request() const override { return kUpgradeRequest; }
  Outcome start(Waiter& waiter) override;
  Outcome resume(Waiter& waiter, WakeToken token) override;
  void abandon(Waiter& waiter, WakeToken token) noexcept override;
  bool cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept override;

 private:
  RwLockWords lock_;
  const ThreadId self_;
};

// A self-contained readers-writer lock for C++ code (Lockable and SharedLockable, so it works
// with std::unique_lock and std::shared_lock), built on RwLockWords.
class RwLock {
 public:
  RwLock() = default;
  RwLock(const RwLock&) = delete;
  RwLock& operator=(const RwLock&) = delete;

  // Both throw std::system_error (resource_deadlock_would_occur) if this thread holds the write
  // lock. A thread holding a read lock must not call lock(): that waits forever. A lock whose
  // previous writer ended holding it is acquired like any other here; RwLockWords reports that
  // case to callers that can act on it.
  void lock() { check(words().lock(current_thread_id())); }
  void lock_shared() { check(words().lock_shared(current_thread_id())); }

  bool try_lock() noexcept { return words().try_lock(current_thread_id()); }
  bool try_lock_shared() noexcept { return words().try_lock_shared(); }
  template <typename Rep, typename Period>
  bool try_lock_for(std::chrono::duration<Rep, Period> timeout) {
    const ThreadId self = current_thread_id();
    return words().try_lock(self) ||
           acquired(words().lock_slow(self, Deadline::at(Clock::now() + timeout)));
  }
  template <typename Rep, typename Period>
  bool try_lock_shared_for(std::chrono::duration<Rep, Period> timeout) {
    return words().try_lock_shared() ||
           acquired(
               words().lock_shared_slow(current_thread_id(), Deadline::at(Clock::now() + timeout)));
  }

  void unlock() noexcept { words().unlock(current_thread_id()); }
  void unlock_shared() noexcept { words().unlock_shared(); }

  // The upgradable read lock: shared with plain readers, one holder at a time. upgrade() waits
  // for the other readers to leave and then holds the write lock (release it with unlock()).
  // lock_upgradable() throws as lock() does.
  void lock_upgradable() { check(words().lock_upgradable(current_thread_id())); }
  bool try_lock_upgradable() noexcept { return words().try_lock_upgradable(current_thread_id()); }
  void unlock_upgradable() noexcept { words().unlock_upgradable(current_thread_id()); }
  // Throws std::system_error (operation_not_permitted) if this thread does not hold the
  // upgradable read lock.
  void upgrade() {
    if (words().upgrade(current_thread_id()) == Outcome::kNotOwner) {
      throw std::system_error(std::make_error_code(std::errc::operation_not_permitted));
    }
  }

 private:
  static bool acquired(RwLockWords::LockStatus status) noexcept {
    return status == RwLockWords::LockStatus::kAcquired ||
           status == RwLockWords::LockStatus::kOwnerDied;
  }
  static void check(RwLockWords::LockStatus status) {
    if (status == RwLockWords::LockStatus::kAlreadyHeld) {
      throw std::system_error(std::make_error_code(std::errc::resource_deadlock_would_occur));
    }
  }
  RwLockWords words() noexcept { return RwLockWords(words_); }
  alignas(RwLockWords::kAlign) std::int32_t words_[RwLockWords::kWordCount] = {};
};

}  // namespace parklock
