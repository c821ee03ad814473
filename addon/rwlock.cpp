#include "rwlock.h"

#include <optional>

#include "spin.h"

namespace parklock {

namespace {

// As for the mutex: spinning pays only while a holder is running and about to release.
constexpr int kSpinLimit = 40;

}  // namespace

RwLockWords::Attempt RwLockWords::try_acquire_or_mark(Mode mode, ThreadId self, std::int32_t seen) {
  if (is_corrupt(seen)) return Attempt::kCorrupt;
  if (available(mode, seen)) {
    const std::int32_t mine = mode == Mode::kExclusive ? kWriter : seen + kOneReader;
    if (!state().compare_exchange_weak(seen, mine, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
      return Attempt::kRetry;
    }
    if (mode == Mode::kExclusive) owner().store(self, std::memory_order_relaxed);
    return Attempt::kAcquired;
  }
  // Not available to this mode, so held (a free word with only the parked bit is corrupt).
  if ((seen & kParked) != 0) return Attempt::kContended;
  return state().compare_exchange_weak(seen, seen | kParked, std::memory_order_relaxed)
             ? Attempt::kContended
             : Attempt::kRetry;
}

RwLockWords::LockStatus RwLockWords::acquire_slow(Mode mode, ThreadId self, Deadline deadline,
                                                  const Interrupt* interrupt) {
  if (holds_write_lock(self)) return LockStatus::kAlreadyHeld;
  parking_lot::ParkOptions options;
  options.deadline = deadline;
  options.interrupt = interrupt;
  options.since = Clock::now();
  options.request = mode == Mode::kShared ? kSharedRequest : exclusive_request(self);
  const auto must_wait = [this] { return this->must_wait(); };
  int spins = 0;
  for (;;) {
    const std::int32_t seen = state().load(std::memory_order_relaxed);
    // Held, and nobody parked yet: the holder may be about to release.
    if (spins < kSpinLimit && !available(mode, seen) && (seen & kParked) == 0 &&
        !is_corrupt(seen)) {
      spin_pause(spins++);
      continue;
    }
    switch (try_acquire_or_mark(mode, self, seen)) {
      case Attempt::kAcquired:
        return LockStatus::kAcquired;
      case Attempt::kRetry:
        continue;
      case Attempt::kCorrupt:
        return LockStatus::kCorrupt;
      case Attempt::kContended:
        break;
    }
    if (deadline.expired()) {
      after_cancel();  // the parked bit this thread may have set is nobody's business any more
      return LockStatus::kTimedOut;
    }
    const ParkResult parked = parking_lot::park(address(), must_wait, options);
    switch (parked.status) {
      case ParkResult::Status::kInvalid:
        continue;
      case ParkResult::Status::kTimedOut:
        after_cancel();
        return LockStatus::kTimedOut;
      case ParkResult::Status::kInterrupted:
        after_cancel();
        return LockStatus::kInterrupted;
      case ParkResult::Status::kUnparked:
        break;
    }
    // Every wake-up is a grant in the requested mode: the state already counts this thread.
    if (parked.interrupted) {
      abandon_wake(self, parked.token);
      return LockStatus::kInterrupted;
    }
    return LockStatus::kAcquired;
  }
}

RwLockWords::LockStatus RwLockWords::lock_slow(ThreadId self, Deadline deadline,
                                               const Interrupt* interrupt) {
  return acquire_slow(Mode::kExclusive, self, deadline, interrupt);
}

RwLockWords::LockStatus RwLockWords::lock_shared_slow(ThreadId self, Deadline deadline,
                                                      const Interrupt* interrupt) {
  return acquire_slow(Mode::kShared, self, deadline, interrupt);
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

RwLockWords::UnlockStatus RwLockWords::unlock_shared_slow() noexcept {
  for (;;) {
    std::int32_t seen = state().load(std::memory_order_relaxed);
    if (is_corrupt(seen)) return UnlockStatus::kCorrupt;
    if ((seen & kWriter) != 0 || readers_of(seen) == 0) return UnlockStatus::kNotOwner;
    if (readers_of(seen) == 1 && (seen & kParked) != 0) break;
    if (state().compare_exchange_weak(seen, seen - kOneReader, std::memory_order_release,
                                      std::memory_order_relaxed)) {
      return UnlockStatus::kUnlocked;
    }
  }
  // The last read hold of a parked lock. While the parked bit is set no reader can join, so this
  // stays the last one until the release below (another release under the bucket lock may have
  // granted readers meanwhile; release_and_grant subtracts from whatever the word then holds).
  release_and_grant(kOneReader);
  return UnlockStatus::kUnlocked;
}

void RwLockWords::release_and_grant(std::int32_t released) noexcept {
  // Decisions are taken on the word as first read under the bucket lock. With waiters queued the
  // parked bit is set, so the only concurrent change is a reader that is not the last releasing
  // on the fast path: the word only loses readers, which never makes a refused grant grantable
  // without another release coming here. The final update re-reads the word for the same reason.
  std::optional<std::uint32_t> free_of_us;  // the state without the parked bit and `released`
  std::uint32_t granted_readers = 0;
  ThreadId granted_writer = kNoThread;
  const auto without_us = [&](std::int32_t word) {
    return (static_cast<std::uint32_t>(word) & ~static_cast<std::uint32_t>(kParked)) -
           static_cast<std::uint32_t>(released);
  };
  const auto grant = [&](std::int64_t request) -> std::optional<WakeToken> {
    if (!free_of_us) free_of_us = without_us(state().load(std::memory_order_relaxed));
    const std::uint32_t base = *free_of_us;
    if (granted_writer != kNoThread) return std::nullopt;
    if (request == kSharedRequest) {
      if ((base & kWriter) != 0 ||
          (base >> kReaderShift) + granted_readers >= static_cast<std::uint32_t>(kMaxReaders)) {
        return std::nullopt;
      }
      ++granted_readers;
      return kGrantedShared;
    }
    // A writer only as the first grant, and only into a free lock.
    if (base != 0 || granted_readers != 0 || request <= 0 ||
        request > std::numeric_limits<ThreadId>::max()) {
      return std::nullopt;
    }
    granted_writer = static_cast<ThreadId>(request);
    return kGrantedExclusive;
  };
  const auto finish = [&](bool queue_empty) {
    // The writer bit stays set (or goes from readers to writer) in one step with this store, and
    // the owner word is written before it: no other writer can be between.
    if (granted_writer != kNoThread) owner().store(granted_writer, std::memory_order_relaxed);
    std::int32_t seen = state().load(std::memory_order_relaxed);
    for (;;) {
      std::uint32_t next = without_us(seen) + (granted_readers << kReaderShift);
      if (granted_writer != kNoThread) next |= kWriter;
      if (!queue_empty) next |= kParked;
      if (state().compare_exchange_weak(seen, static_cast<std::int32_t>(next),
                                        std::memory_order_acq_rel, std::memory_order_relaxed)) {
        return;
      }
    }
  };
  parking_lot::unpark_granted(address(), grant, finish);
}

RwLockWords::AsyncStep RwLockWords::lock_or_enqueue(Waiter& waiter) {
  const Mode mode = waiter.request() == kSharedRequest ? Mode::kShared : Mode::kExclusive;
  const auto must_wait = [this] { return this->must_wait(); };
  for (;;) {
    switch (try_acquire_or_mark(mode, waiter.thread(), state().load(std::memory_order_relaxed))) {
      case Attempt::kAcquired:
        return AsyncStep::kAcquired;
      case Attempt::kRetry:
        continue;
      case Attempt::kCorrupt:
        return AsyncStep::kCorrupt;
      case Attempt::kContended:
        break;
    }
    if (parking_lot::enqueue(address(), waiter, must_wait)) return AsyncStep::kQueued;
  }
}

void RwLockWords::abandon_wake(ThreadId self, WakeToken token) noexcept {
  switch (token) {
    case kGrantedExclusive:
      unlock(self);
      return;
    case kGrantedShared:
      unlock_shared();
      return;
    default:
      return;
  }
}

void RwLockWords::after_cancel() noexcept {
  release_and_grant(0);
}

}  // namespace parklock
