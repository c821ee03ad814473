// A readers-writer lock (shared/exclusive) in two 32-bit words of caller-owned (possibly shared)
// memory, fair between readers and writers.
//
// Shared-memory layout (kBytes = 8, kAlign = 4; all zero is an unlocked lock):
//
//   word  bits   field    values
//   ----  -----  -------  ---------------------------------------------------------------------
//   [0]   0      writer   1: a writer holds the lock (then the reader count is 0)
//         1      parked   1: waiters may be queued; from then on nobody takes the lock except
//                         through a grant made under the bucket lock, and the release that
//                         frees the lock takes the slow path
//         2..30  readers  how many read holds are outstanding, 0 to kMaxReaders
//         31     -        always 0
//   [1]   0..31  owner    the writer's ThreadId while it holds the lock; 0 otherwise
//
// Values never written, reported as corrupt: a negative state, the writer bit together with a
// reader count, and "parked" alone (a free lock with waiters: the release that frees a lock
// always grants it to the oldest waiter in the same step).
//
// Who writes what:
//   - A newcomer acquires only when the parked bit is clear: a writer by CAS 0 -> writer and then
//     storing its id in the owner word; a reader by CAS adding one reader while there is no
//     writer. So once anybody waits, readers stop barging in and a writer cannot be starved.
//   - A thread that must wait sets the parked bit (CAS) and parks while the word still reads
//     "held, parked" (checked under the bucket lock).
//   - A writer releases by clearing the owner word FIRST and then CAS writer -> 0, so a writer
//     that acquires right after never has its id overwritten. A reader releases by CAS
//     subtracting one reader, unless it is the last reader and the parked bit is set.
//   - Those two remaining cases (the release of a parked lock) run under the bucket lock and hand
//     the lock over in FIFO order (parking_lot::unpark_filter): the oldest waiter if it is a
//     writer (its owner word is set for it), or the run of readers at the head of the queue up to
//     the first writer. The state word is updated for them before they wake, and the parked bit
//     is kept exactly when waiters remain. Waking is therefore never a race to re-acquire: every
//     wake-up is a grant (kGrantedShared / kGrantedExclusive).
//   - A waiter that leaves the queue without a grant (timeout, interrupt, cancelled async wait)
//     runs the same grant step with nothing released, in the critical section of its departure
//     (parking_lot::Grant): it clears a parked bit nobody needs any more
//     and grants the new head of the queue what is now grantable (readers behind a writer that
//     gave up join the readers holding the lock).
//
// Owner death (owner_death.h), write side only. A state with the writer bit whose owner word names
// a thread that has ended is still held: nothing else could tell the next holder that the data may
// be half-updated. Whoever finds it on the slow path, in either mode, takes it over and reports
// kOwnerDied: a writer by one CAS of the owner word ended -> self (the state stays, parked bit
// included); a reader by one CAS of the owner word ended -> 0, which alone makes it the claimant
// (no writer can take a state with the writer bit, and nobody else writes the owner word of a
// held lock), and then by turning the writer bit into one read hold, keeping the parked bit. Both
// CAS the owner word, so exactly one thread takes over. With waiters queued when the thread ends,
// recover_from_ended_owner() claims the owner word the same way and releases the write hold to
// the oldest waiters, the first of which gets a grant carrying the ended owner; if the queue
// emptied meanwhile, the writer bit stays and the owner word names the ended thread again, for the
// next acquirer to find. A writer that gives such a grant away puts the ended owner back and
// recovers again, so the report is never lost (a reader giving one away just releases its hold).
// Read holds are not recorded per thread, so a reader that ends holding one is not detected.
//
// Self-deadlock: lock() or lock_shared() by the thread holding the write lock is refused
// (kAlreadyHeld), also when one of its own asynchronous waits is granted the write lock while the
// thread blocks waiting for it (a blocked wait in a thread with an interrupt watches for that).
// Upgrading a read hold to a write hold (lock() while this thread reads) waits forever and is NOT
// detected: readers are counted, not recorded per thread. For the same reason unlock_shared() can
// only refuse a release when no reader at all holds the lock.
//
// JavaScript runs the fast paths itself with Atomics on the same words (lib/rwlock.js), using the
// layout constants the binding exports.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <system_error>

#include "atomic_ref.h"
#include "deadline.h"
#include "function_ref.h"
#include "lock_wait.h"
#include "parking_lot.h"
#include "thread_id.h"

namespace parklock {

class RwLockWords {
 public:
  // Layout constants, exported to JavaScript by the binding.
  static constexpr std::size_t kWordCount = 2;
  static constexpr std::size_t kBytes = kWordCount * sizeof(std::int32_t);
  static constexpr std::size_t kAlign = alignof(std::int32_t);
  static constexpr std::size_t kStateIndex = 0;
  static constexpr std::size_t kOwnerIndex = 1;
  static constexpr std::int32_t kWriter = 1;
  static constexpr std::int32_t kParked = 2;
  static constexpr int kReaderShift = 2;
  static constexpr std::int32_t kOneReader = 1 << kReaderShift;
  static constexpr std::int32_t kMaxReaders =
      std::numeric_limits<std::int32_t>::max() >> kReaderShift;

  // What a waiter asks for (Waiter::request()): a shared hold, or an exclusive one for the thread
  // whose ThreadId (always positive) is the request, so that a grant can record the owner.
  static constexpr std::int64_t kSharedRequest = -1;
  static constexpr std::int64_t exclusive_request(ThreadId thread) noexcept { return thread; }

  // Tokens a waiter receives: the lock was handed to it in the requested mode.
  enum Wake : WakeToken { kGrantedShared = 3 * kTokenSpaceSize, kGrantedExclusive };

  // kOwnerDied: acquired (in the requested mode), and the previous writer had ended holding the
  // lock. Wherever it is returned, `*ended_owner` (if given) is set to that writer.
  using LockStatus = parklock::LockStatus;
  enum class UnlockStatus { kUnlocked, kNotOwner, kCorrupt };
  using AsyncStep = parklock::AsyncStep;
  enum class Mode { kShared, kExclusive };

  static constexpr bool is_corrupt(std::int32_t state) noexcept {
    return state < 0 || ((state & kWriter) != 0 && readers_of(state) != 0) || state == kParked;
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
    while ((seen & (kWriter | kParked)) == 0 && readers_of(seen) < kMaxReaders) {
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
    // The fast path never releases the last read hold of a parked lock: that one hands it on.
    std::int32_t seen = state().load(std::memory_order_relaxed);
    if (seen > 0 && (seen & kWriter) == 0 && (readers_of(seen) > 1 || seen == kOneReader)) {
      if (state().compare_exchange_strong(seen, seen - kOneReader, std::memory_order_release,
                                          std::memory_order_relaxed)) {
        return UnlockStatus::kUnlocked;
      }
    }
    return unlock_shared_slow();
  }

  LockStatus lock_shared_slow(ThreadId self, Deadline deadline, ThreadId* ended_owner = nullptr);

  // The full release of one read hold: kNotOwner when no reader holds the lock.
  UnlockStatus unlock_shared_slow() noexcept;

  // --- Asynchronous waits and giving up ---

  // One step of an asynchronous lock in the mode `waiter.request()` names (kSharedRequest or
  // exclusive_request(waiter.thread())): acquires now, or queues `waiter`, whose one wake-up is
  // then the grant. Never blocks and never spins.
  AsyncStep lock_or_enqueue(Waiter& waiter, ThreadId* ended_owner = nullptr);

  // A waiter that received `token` but no longer wants the lock (timed out, cancelled, its thread
  // is gone) releases what it was granted, which hands the lock on to the next waiters; a write
  // grant that carries an ended owner goes back to that owner and is recovered again.
  void abandon_wake(ThreadId self, WakeToken token) noexcept;

  // --- Owner death ---

  // A try-lock that found the lock taken: takes it over in `mode` if its writer has ended (true,
  // with the ended writer in `*ended_owner`). Never waits.
  bool take_from_ended_owner(Mode mode, ThreadId self, ThreadId* ended_owner) noexcept;

  // The WaitSite::recover of RWLock waiters: `address` is the state word. If the thread `ended`
  // holds the write lock there and waiters are parked, grants the lock to the oldest of them.
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
  ThreadId writer() const noexcept { return owner().load(std::memory_order_relaxed); }
  // Who holds the lock whose state word is at `address` (WaitSite::holder): the writer; readers
  // are counted, not named, so a read-held lock has none.
  static ThreadId writer_at(const void* address) noexcept;
  // The site of RWLock waiters (parking_lot.h).
  static const WaitSite kWaitSite;
  const void* address() const noexcept { return words_ + kStateIndex; }

 private:
  atomic_ref<std::int32_t> state() const noexcept {
    return atomic_ref<std::int32_t>(words_[kStateIndex]);
  }
  atomic_ref<std::int32_t> owner() const noexcept {
    return atomic_ref<std::int32_t>(words_[kOwnerIndex]);
  }

  bool holds_write_lock(ThreadId self) const noexcept {
    return (state().load(std::memory_order_relaxed) & kWriter) != 0 && writer() == self;
  }
  // Whether a newcomer may take the lock in `mode` now (never while anybody is parked).
  static constexpr bool available(Mode mode, std::int32_t seen) noexcept {
    if (mode == Mode::kExclusive) return seen == 0;
    return (seen & (kWriter | kParked)) == 0 && readers_of(seen) < kMaxReaders;
  }
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
  LockStatus acquire_loop(Mode mode, ThreadId self, Deadline deadline,
                          const parking_lot::ParkOptions& options, ThreadId* ended_owner);
  // Under the bucket lock: gives back `released` (kWriter, kOneReader, 0, or kWriter - kOneReader
  // for a downgrade) and grants the oldest
  // waiters what is then grantable, keeping the parked bit exactly when waiters remain. With an
  // `ended` writer (whose owner word the caller has claimed), the first grant carries it, and if
  // nothing is granted the write hold stays, with the owner word naming `ended` again.
  void release_and_grant(std::int32_t released, ThreadId ended = kNoThread) noexcept;
  // The grant step of release_and_grant(), handed to `run`, which must run it under the bucket
  // lock (parking_lot::unpark_filter, or a departing waiter's on_leave) at most once.
  void with_release_grant(std::int32_t released, ThreadId ended,
                          FunctionRef<void(const parking_lot::Grant&)> run) noexcept;

  std::int32_t* words_;
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
