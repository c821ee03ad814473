// The one mapping from every core status to a Settlement. A status that means "queued" maps to
// kPending: the asynchronous wait goes on.
#pragma once

#include "barrier.h"
#include "condition.h"
#include "futex.h"
#include "latch.h"
#include "mutex.h"
#include "rwlock.h"
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

constexpr Settlement settlement_of(ConditionWord::WaitStatus status) {
  switch (status) {
    case ConditionWord::WaitStatus::kNotified:
      return settled::kAcquired;
    case ConditionWord::WaitStatus::kTimedOut:
      return settled::kTimedOut;
    case ConditionWord::WaitStatus::kInterrupted:
      return settled::kInterrupted;
    case ConditionWord::WaitStatus::kOwnerDied:
      return settled::kOwnerDied;
    case ConditionWord::WaitStatus::kAlreadyHeld:
      return settled::kAlreadyHeld;
    case ConditionWord::WaitStatus::kDeadlock:
      return settled::kDeadlock;
    case ConditionWord::WaitStatus::kNotOwner:
      return settled::kNotOwner;
    case ConditionWord::WaitStatus::kCorrupt:
      break;
  }
  return settled::kCorrupt;
}

constexpr Settlement settlement_of(futex::WaitStatus status) {
  switch (status) {
    case futex::WaitStatus::kWoken:
      return settled::kAcquired;
    case futex::WaitStatus::kNotEqual:
      return settled::kNotEqual;
    case futex::WaitStatus::kTimedOut:
      return settled::kTimedOut;
    case futex::WaitStatus::kInterrupted:
      break;
  }
  return settled::kInterrupted;
}

constexpr Settlement settlement_of(LatchWord::WaitStatus status) {
  switch (status) {
    case LatchWord::WaitStatus::kReleased:
      return settled::kAcquired;
    case LatchWord::WaitStatus::kTimedOut:
      return settled::kTimedOut;
    case LatchWord::WaitStatus::kInterrupted:
      return settled::kInterrupted;
    case LatchWord::WaitStatus::kCorrupt:
      break;
  }
  return settled::kCorrupt;
}

// kTimedOut: the arrival was withdrawn. kUninitialized cannot happen where JavaScript has read
// the parties word first (it is written once); after that it means overwritten memory.
constexpr Settlement settlement_of(BarrierWord::Outcome outcome) {
  switch (outcome) {
    case BarrierWord::Outcome::kLeader:
      return settled::kLeader;
    case BarrierWord::Outcome::kPassed:
      return settled::kAcquired;
    case BarrierWord::Outcome::kTimedOut:
      return settled::kTimedOut;
    case BarrierWord::Outcome::kInterrupted:
      return settled::kInterrupted;
    case BarrierWord::Outcome::kUninitialized:
    case BarrierWord::Outcome::kCorrupt:
      break;
  }
  return settled::kCorrupt;
}

}  // namespace parklock::binding
