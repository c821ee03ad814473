// The RWLock's waits as WaitSteps (wait_step.h), each run blocking or for a Promise.
#pragma once

#include <cstdint>
#include <optional>

#include "rwlock.h"
#include "wait_step.h"

namespace parklock {

// A lock wait of `self` in `mode`. Every wake-up is a grant in that mode, or for a writer the
// drain (kGrantedDrain), after which it waits on as the draining writer.
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
  bool draining_ = false;
};

// The upgrade of the upgradable read hold of `self`. Each wake-up means "look again": the
// upgrader is the only waiter of the drain key.
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

}  // namespace parklock
