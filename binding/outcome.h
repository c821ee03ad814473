// The one mapping from every core status to a Settlement. A status that means "queued" maps to
// kPending: the asynchronous wait goes on.
#pragma once

#include "mutex.h"
#include "rwlock.h"
#include "semaphore.h"
#include "settlement.h"

namespace parklock::binding {

// What a core WaitStep returns is already a Settlement.
constexpr Settlement settlement_of(Outcome outcome) {
  return outcome;
}

// The asynchronous steps of the locks that record an owner (lock_wait.h).
constexpr Settlement settlement_of(AsyncStep step) {
  switch (step) {
    case AsyncStep::kAcquired:
      return settled::kAcquired;
    case AsyncStep::kOwnerDied:
      return settled::kOwnerDied;
    case AsyncStep::kQueued:
      return settled::kPending;
    case AsyncStep::kCorrupt:
      break;
  }
  return settled::kCorrupt;
}

// The upgrade of an RWLock's upgradable read hold.
constexpr Settlement settlement_of(RwLockWords::UpgradeStatus status) {
  switch (status) {
    case RwLockWords::UpgradeStatus::kUpgraded:
      return settled::kAcquired;
    case RwLockWords::UpgradeStatus::kTimedOut:
      return settled::kTimedOut;
    case RwLockWords::UpgradeStatus::kInterrupted:
      return settled::kInterrupted;
    case RwLockWords::UpgradeStatus::kNotHolder:
      return settled::kNotOwner;
    case RwLockWords::UpgradeStatus::kCorrupt:
      break;
  }
  return settled::kCorrupt;
}

constexpr Settlement settlement_of(RwLockWords::UpgradeStep step) {
  switch (step) {
    case RwLockWords::UpgradeStep::kUpgraded:
      return settled::kAcquired;
    case RwLockWords::UpgradeStep::kQueued:
      return settled::kPending;
    case RwLockWords::UpgradeStep::kNotHolder:
      return settled::kNotOwner;
    case RwLockWords::UpgradeStep::kCorrupt:
      break;
  }
  return settled::kCorrupt;
}

// kBadCount cannot happen: the binding checks counts before it calls the core.
constexpr Settlement settlement_of(SemaphoreWord::AcquireStatus status) {
  switch (status) {
    case SemaphoreWord::AcquireStatus::kAcquired:
      return settled::kAcquired;
    case SemaphoreWord::AcquireStatus::kTimedOut:
      return settled::kTimedOut;
    case SemaphoreWord::AcquireStatus::kInterrupted:
      return settled::kInterrupted;
    case SemaphoreWord::AcquireStatus::kCorrupt:
    case SemaphoreWord::AcquireStatus::kBadCount:
      break;
  }
  return settled::kCorrupt;
}

constexpr Settlement settlement_of(SemaphoreWord::AsyncStep step) {
  switch (step) {
    case SemaphoreWord::AsyncStep::kAcquired:
      return settled::kAcquired;
    case SemaphoreWord::AsyncStep::kQueued:
      return settled::kPending;
    case SemaphoreWord::AsyncStep::kCorrupt:
    case SemaphoreWord::AsyncStep::kBadCount:
      break;
  }
  return settled::kCorrupt;
}

}  // namespace parklock::binding
