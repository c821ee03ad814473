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
