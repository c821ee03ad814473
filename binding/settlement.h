// How a wait ended, as the number JavaScript receives: exported to it as `native.settled` and
// interpreted in one place there (lib/outcomes.js). The one vocabulary every binding speaks;
// outcome.h maps each core status onto it.
#pragma once

#include "wait_step.h"

namespace parklock::binding {

using Settlement = Outcome;

namespace settled {

inline constexpr Outcome kAcquired = Outcome::kAcquired;
inline constexpr Outcome kTimedOut = Outcome::kTimedOut;
inline constexpr Outcome kCancelled = Outcome::kCancelled;
inline constexpr Outcome kAlreadyHeld = Outcome::kAlreadyHeld;
inline constexpr Outcome kCorrupt = Outcome::kCorrupt;
inline constexpr Outcome kPending = Outcome::kPending;
inline constexpr Outcome kNotEqual = Outcome::kNotEqual;
inline constexpr Outcome kNotOwner = Outcome::kNotOwner;
inline constexpr Outcome kOwnerDied = Outcome::kOwnerDied;
inline constexpr Outcome kLeader = Outcome::kLeader;
inline constexpr Outcome kDeadlock = Outcome::kDeadlock;
inline constexpr Outcome kInterrupted = Outcome::kInterrupted;

}  // namespace settled
}  // namespace parklock::binding
