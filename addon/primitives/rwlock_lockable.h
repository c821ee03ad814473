// A self-contained readers-writer lock for C++ code, on the words of rwlock.h: Lockable and
// SharedLockable, so it works with std::unique_lock and std::shared_lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <system_error>

#include "primitives/rwlock.h"

namespace parklock {

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
