// A readers-writer lock (shared/exclusive, with an upgradable read lock) in two 32-bit words of
// caller-owned (possibly shared) memory, fair between readers and writers.
//
// Shared-memory layout (kBytes = 8, kAlign = 4; all zero is an unlocked lock):
//
//   word  bits   field       values
//   ----  -----  ----------  -------------------------------------------------------------------
//   [0]   0      writer      1: a writer holds the lock (then nothing else below is set but parked)
//         1      parked      1: waiters may be queued; from then on nobody takes the lock except
//                            through a grant made under the bucket lock (in a region: except a
//                            waiter woken to compete), and the release that frees the lock takes
//                            the slow path
//         2      upgradable  1: one thread holds the upgradable read lock, which is also one of
//                            the read holds counted below
//         3      draining    1: one writer waits, on a key of its own (drain_key()), for the read
//                            holds to leave: the upgradable holder (with the upgradable bit),
//                            which waits to be the only reader, or else the writer that reached
//                            the head of the queue, or that found readers alone holding it and
//                            nobody queued (in a region: any writer refused beside readers),
//                            which waits for none; no reader joins meanwhile, and nobody else
//                            takes the lock
//         4..30  readers     how many read holds are outstanding, 0 to kMaxReaders
//         31     -           always 0
//   [1]   0..31  owner       the ThreadId of the writer, or of the upgradable holder, while it
//                            holds the lock (in a region: a region identity, shared_region.h,
//                            which also names the writer that drains); 0 otherwise
//
// Values never written, reported as corrupt: a negative state; the writer bit together with a
// reader count, the upgradable bit or the draining bit; the upgradable bit without a reader; and
// "parked" alone (a free lock with waiters: the release that frees a lock grants it to the oldest
// waiter in the same step or clears the bit, and wakes a waiter that sets it again).
//
// The protocol (who writes what, the drain, owner death) is described in rwlock.cpp; in memory
// other processes share (shared_region.h) waiters compete instead of being granted the lock, as
// rwlock_across_processes.cpp describes. JavaScript
// runs the fast paths itself with Atomics on the same words (lib/rwlock.js, lib/rwlock_words.js),
// using the layout constants the binding exports.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "lot/atomic_ref.h"
#include "lot/deadline.h"
#include "lot/function_ref.h"
#include "lot/parking_lot.h"
#include "lot/thread_id.h"
#include "lot/wait_step.h"
#include "primitives/int32_words.h"
#include "primitives/lock_wait.h"

namespace parklock {

class RwLockWords : public Int32Words<2> {
 public:
  static constexpr std::size_t kStateIndex = 0;
  static constexpr std::size_t kOwnerIndex = 1;
  static constexpr std::int32_t kWriter = 1;
  static constexpr std::int32_t kParked = 2;
  static constexpr std::int32_t kUpgradable = 4;
  static constexpr std::int32_t kDraining = 8;
  static constexpr int kReaderShift = 4;
  static constexpr std::int32_t kOneReader = 1 << kReaderShift;
  static constexpr std::int32_t kMaxReaders =
      std::numeric_limits<std::int32_t>::max() >> kReaderShift;

  // What a waiter asks for (Waiter::request()): a shared hold; an exclusive one for the thread
  // whose ThreadId (always positive) is the request, or an upgradable one for the thread whose
  // ThreadId is -1 - request, so that a grant can record the owner; or the upgrade of the
  // upgradable hold.
  static constexpr std::int64_t kSharedRequest = -1;
  static constexpr std::int64_t kUpgradeRequest = 0;
  static constexpr std::int64_t exclusive_request(ThreadId thread) noexcept { return thread; }
  static constexpr std::int64_t upgradable_request(ThreadId thread) noexcept {
    return -1 - std::int64_t{thread};
  }

  // Tokens a waiter receives: the lock was handed to it in the requested mode; a writer became
  // the draining writer; (the draining writer) the readers it waits for have left; in memory
  // other processes share, the word changed: look at it again and compete; or (a writer, outside
  // a region) the lock was freed, compete for it (rwlock.cpp, "Barging").
  enum Wake : WakeToken {
    kGrantedShared = 3 * kTokenSpaceSize,
    kGrantedExclusive,
    kGrantedUpgradable,
    kReadersLeft,
    kGrantedDrain,
    kLookAgain,
    kCompete
  };

  // kOwnerDied: acquired (in the requested mode), and the previous writer had ended holding the
  // lock. Wherever it is returned, `*ended_owner` (if given) is set to that writer.
  using LockStatus = parklock::LockStatus;
  enum class UnlockStatus { kUnlocked, kNotOwner, kCorrupt };
  enum class Mode { kShared, kExclusive, kUpgradable };

  static constexpr bool is_corrupt(std::int32_t state) noexcept {
    return state < 0 ||
           ((state & kWriter) != 0 &&
            (readers_of(state) != 0 || (state & (kUpgradable | kDraining)) != 0)) ||
           ((state & kUpgradable) != 0 && readers_of(state) == 0) || state == kParked;
  }
  // Shifted as unsigned: a (corrupt) negative word reads as more than kMaxReaders readers, so no
  // fast path that checks the count against kMaxReaders ever acts on it.
  static constexpr std::int32_t readers_of(std::int32_t state) noexcept {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(state) >> kReaderShift);
  }
  // Held in either mode, or reserved for the draining writer (what the parked bit alone does not
  // mean).
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
    while ((seen & (kWriter | kParked | kDraining)) == 0 && readers_of(seen) < kMaxReaders &&
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
    // a hold a draining writer waits for (that one may have to wake it).
    std::int32_t seen = state().load(std::memory_order_relaxed);
    if (seen > 0 && (seen & (kWriter | kDraining)) == 0 &&
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
    while ((seen & (kWriter | kParked | kUpgradable | kDraining)) == 0 &&
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

  // The upgrade protocol, one step, for `self`: upgrades now (kAcquired), or becomes the draining
  // writer and goes on as drain_or_enqueue(); kNotOwner if `self` does not hold the upgradable
  // read lock; kCorrupt.
  Outcome upgrade_or_enqueue(ThreadId self, Waiter& waiter, Deadline deadline = Deadline::never());

  // The upgrade as a WaitStep (wait_step.h), blocking or Promise (rwlock_steps.h).
  class UpgradeStep;

  // --- The draining writer ---

  // The drain, one step, for the draining writer `self`: takes the write lock once the readers it
  // waits for have left (kAcquired), or queues `waiter` on drain_key(), whose wake-up
  // (kReadersLeft) means "look again" (kPending); kTimedOut (the drain ended) once `deadline`
  // has passed; kCorrupt if the draining bit is gone.
  Outcome drain_or_enqueue(ThreadId self, Waiter& waiter, Deadline deadline = Deadline::never());

  // The draining writer `self` gives up (its deadline, an interrupt, a cancel): the draining bit
  // goes, and in the same step the waiters it kept out are granted what they can have now
  // (wake-ups appended to `deferred` if given, as for parking_lot::cancel()). Only an upgrader,
  // whose hold keeps the lock taken, may pass `grant` false: a release of that hold grants them
  // later. In a region it ends only a drain that is still its own (end_drain_in_region()).
  void end_drain(ThreadId self, parking_lot::Wakeups* deferred = nullptr,
                 bool grant = true) noexcept;

  // Where the draining writer waits: the owner word, a key of its own; in memory other processes
  // share, the lock's own queue (rwlock_across_processes.cpp).
  const void* drain_key() const noexcept { return words_ + kOwnerIndex; }
  const void* drain_wait_key() const noexcept;

  // A writer `self` refused beside readers alone, while nobody is queued, becomes the draining
  // writer at once (true; go on with drain_or_enqueue()), so that readers arriving from now on
  // wait for it. False in a region (begin_drain_in_region()), and wherever the lock is not held by
  // readers alone or waiters are queued (their order is the queue's).
  bool begin_drain(ThreadId self) noexcept;

  // --- Across processes (rwlock_across_processes.cpp) ---

  // Whether the words lie in a region other processes map (cross_process.h).
  bool in_region() const noexcept;

  // The WaitSite::look_again of RWLock waiters: wakes every waiter of this process on the lock at
  // `address` to look at the word again (kLookAgain).
  static void look_again(const void* address) noexcept;

  // In a region, a writer `self` refused beside readers (and no upgradable hold) becomes the
  // draining writer at once, named in the owner word (true; go on with drain_or_enqueue()).
  // False outside regions, and wherever the lock is not held by readers alone.
  bool begin_drain_in_region(ThreadId self) noexcept;

  // --- Lock waits and giving up ---

  // The lock protocol, one step, for `self` in the mode `waiter.request()` names (kSharedRequest,
  // exclusive_request(self) or upgradable_request(self)): acquires now (kAcquired;
  // kOwnerDied from a writer that ended), or queues `waiter`, whose wake-up is then the grant, or
  // for a writer the drain (kGrantedDrain: go on with drain_or_enqueue()) (kPending); kTimedOut
  // once `deadline` has passed (nothing left marked for it); kCorrupt. In a region every wake-up
  // is kLookAgain, after which the waiter runs this step again with `woken` set.
  // Spins first only for a blocking waiter; never sleeps.
  Outcome lock_or_enqueue(ThreadId self, Waiter& waiter, ThreadId* ended_owner = nullptr,
                          Deadline deadline = Deadline::never(), bool woken = false);

  // A lock wait in one Mode as a WaitStep (wait_step.h), blocking or Promise (rwlock_steps.h).
  class LockStep;

  // A waiter that received `token` but no longer wants the lock (timed out, cancelled, its thread
  // is gone) releases what it was granted, which hands the lock on to the next waiters; a write
  // grant that carries an ended owner goes back to that owner and is recovered again; a wake-up
  // to compete is passed on (pass_on_competition()).
  void abandon_wake(ThreadId self, WakeToken token) noexcept;

  // --- Owner death ---

  // A try-lock that found the lock taken: takes it over in `mode` if its writer has ended (true,
  // with the ended writer in `*ended_owner`). Never waits.
  bool take_from_ended_owner(Mode mode, ThreadId self, ThreadId* ended_owner) noexcept;

  // A thread that found the lock taken: if the upgradable read lock is held by a thread that has
  // ended, releases that hold (true: look at the lock again). Never waits.
  bool release_ended_upgrader(ThreadId self) noexcept;

  // A thread that found the lock taken: if a writer whose thread (in a region, whose process) has
  // ended was draining it, ends that drain (true: look at the lock again). Never waits.
  bool end_ended_drain(ThreadId self) noexcept;

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
  // upgradable reader, or in a region the writer draining it; plain readers are counted, not
  // named.
  static ThreadId holder_at(const void* address) noexcept;
  // The sites of RWLock waiters (parking_lot.h): the lock's queue, and the draining writer's.
  static const WaitSite kWaitSite;
  static const WaitSite kDrainSite;
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
                                      ? kWriter | kParked | kDraining
                                      : kWriter | kParked | kUpgradable | kDraining;
    return (seen & excluded) == 0 && readers_of(seen) < kMaxReaders;
  }
  // The read holds a draining writer waits to be left with: the upgrader its own, others none.
  static constexpr std::int32_t drained_readers(std::int32_t state) noexcept {
    return (state & kUpgradable) != 0 ? 1 : 0;
  }
  // The draining writer's park condition, checked under its bucket lock: still draining, and
  // readers remain that it waits for.
  bool must_wait_for_readers() const noexcept {
    const std::int32_t seen = state().load(std::memory_order_relaxed);
    return (seen & kDraining) != 0 && readers_of(seen) > drained_readers(seen) && !is_corrupt(seen);
  }
  enum class UpgradeMark { kUpgraded, kMarked, kCorrupt };
  // Upgrades if the holder is the only reader, else sets the draining bit (under the bucket lock
  // while waiters are parked).
  UpgradeMark upgrade_or_mark() noexcept;
  // Gives back the upgradable read hold of the thread the owner word named (the caller has
  // cleared or claimed the owner word), with the draining bit if set.
  void release_upgradable_hold() noexcept;
  // The park condition, checked under the bucket lock: held, with waiters announced.
  bool must_wait() const noexcept {
    const std::int32_t seen = state().load(std::memory_order_relaxed);
    return (seen & kParked) != 0 && is_held(seen) && !is_corrupt(seen);
  }
  // `woken`: the waiter was woken to look again (kLookAgain), and may take the lock past the
  // parked bit, which it then keeps set (rwlock_across_processes.cpp).
  Attempt try_acquire_or_mark(Mode mode, ThreadId self, std::int32_t seen, bool woken = false);

  // In a region: gives back `released` (as release_and_grant() takes it) by CAS, clearing the
  // parked bit if that frees the lock, and wakes every waiter here, and other processes' relays,
  // to look again (wake-ups to `deferred` if given). For 0 (a waiter that left) it only wakes.
  void release_in_region(std::int32_t released, parking_lot::Wakeups* deferred = nullptr) noexcept;
  // In a region: clears the draining bit if it is still set (and the parked bit with it if that
  // frees the lock), and wakes as release_in_region() does. The caller has made the drain its
  // own to end: a writer's by claiming the owner word that names the writer.
  void end_drain_in_region(parking_lot::Wakeups* deferred) noexcept;
  // In a region: ends the drain of `self` if it is still that writer's or upgrader's.
  void end_own_drain_in_region(ThreadId self, parking_lot::Wakeups* deferred) noexcept;
  // In a region: gives back the upgradable read hold, with the draining bit if set, reading both
  // from the word it changes (an ended upgrader's drain may be ended meanwhile).
  void release_upgradable_in_region() noexcept;
  static void wake_to_look_again(const void* address, parking_lot::Wakeups* deferred) noexcept;

  // Gives up the write hold of `self`, keeping `keep` (0, or kOneReader for a downgrade): checks
  // ownership, clears the owner word FIRST (so a writer that acquires right after never has its id
  // overwritten), then one CAS writer -> keep, or the slow path if waiters are parked.
  UnlockStatus release_write(ThreadId self, std::int32_t keep) noexcept;
  UnlockStatus release_parked_downgrade() noexcept;
  LockStatus acquire_slow(Mode mode, ThreadId self, Deadline deadline, ThreadId* ended_owner);
  // Under the bucket lock: gives back `released` (kWriter, kOneReader, kUpgradable + kOneReader
  // (with kDraining), kDraining, 0, or kWriter - kOneReader for a downgrade) and grants the
  // oldest waiters what is then grantable, keeping the parked bit exactly when waiters remain.
  // With an `ended` writer (whose owner word the caller has claimed), the first grant carries
  // it, and if nothing is granted the write hold stays, with the owner word naming `ended`
  // again. Wake-ups go to `deferred` if given.
  void release_and_grant(std::int32_t released, ThreadId ended = kNoThread,
                         parking_lot::Wakeups* deferred = nullptr) noexcept;
  // The grant step of release_and_grant(), handed to `run`, which must run it under the bucket
  // lock (parking_lot::unpark_filter, or a departing waiter's on_leave) exactly once. True if it
  // left a draining writer with only the readers it waits for: the caller wakes it, outside the
  // bucket lock.
  bool with_release_grant(std::int32_t released, ThreadId ended,
                          FunctionRef<void(const parking_lot::Grant&)> run) noexcept;
  // A writer `self` woken to compete (kCompete) that gives the wake-up up: the waiters behind it
  // sleep on a word that no longer says they wait, so it takes the lock with the parked bit and
  // releases it through the grant step, or marks the lock for its holder's release to serve.
  void pass_on_competition(ThreadId self) noexcept;
  // The draining writer `self` takes the write lock if the readers it waits for have left.
  Attempt take_drained(ThreadId self) noexcept;

  std::int32_t* words_;
};

}  // namespace parklock
