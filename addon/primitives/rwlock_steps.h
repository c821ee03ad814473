// The RWLock's waits as WaitSteps (wait_step.h), each run blocking or for a Promise.
#pragma once

#include <cstdint>
#include <optional>

#include "lot/wait_step.h"
#include "primitives/rwlock.h"

namespace parklock {

// A lock wait of `self` in `mode`. Every wake-up is a grant in that mode, or for a writer the
// drain (kGrantedDrain), after which it waits on as the draining writer, whose wake-ups mean
// "look again".
class RwLockWords::LockStep : public WaitStep {
 public:
  LockStep(RwLockWords lock, Mode mode, ThreadId self) noexcept
      : lock_(lock), mode_(mode), self_(self) {}
  std::int64_t request() const override;
  ThreadId acts_as() const noexcept override { return self_; }
  Outcome start(Waiter& waiter) override;
  Outcome resume(Waiter& waiter, WakeToken token) override;
  void abandon(Waiter& waiter, WakeToken token) noexcept override;
  bool cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept override;
  std::optional<LockWatch> watch(const Waiter& waiter) const override;

 protected:
  // The lock protocol's step (RwLockWords::lock_or_enqueue), or in a region the drain for a
  // writer refused beside readers. `woken`: as lock_or_enqueue() takes it.
  Outcome lock_or_drain(Waiter& waiter, bool woken);

  struct Upgrade {};
  LockStep(RwLockWords lock, ThreadId self, Upgrade) noexcept
      : lock_(lock), mode_(Mode::kExclusive), self_(self), upgrade_(true), draining_(true) {}

 private:
  RwLockWords lock_;
  const Mode mode_;
  const ThreadId self_;
  const bool upgrade_ = false;
  bool draining_ = false;
};

// The upgrade of the upgradable read hold of `self` to the write lock: a lock wait that starts as
// the draining writer (its hold keeps the lock taken, so no grant is needed first).
class RwLockWords::UpgradeStep final : public LockStep {
 public:
  UpgradeStep(RwLockWords lock, ThreadId self) noexcept : LockStep(lock, self, Upgrade{}) {}
};

}  // namespace parklock
