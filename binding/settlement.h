// How a wait ended, as the number JavaScript receives: exported to it as `native.settled` and
// interpreted in one place there (lib/outcomes.js). The one vocabulary every binding speaks;
// outcome.h maps each core status onto it.
#pragma once

namespace parklock::binding {

using Settlement = int;

namespace settled {

inline constexpr Settlement kAcquired = 1;     // the wait got what it waited for
inline constexpr Settlement kTimedOut = 2;     // a synchronous wait's deadline passed
inline constexpr Settlement kCancelled = 3;    // an asynchronous wait was cancelled (timeout/abort)
inline constexpr Settlement kAlreadyHeld = 4;  // a lock was requested by its holder
inline constexpr Settlement kCorrupt = 5;      // the shared word holds a value no operation writes
// An asynchronous wait is queued: its Promise waits. Never reaches JavaScript as such: a start
// call returns the queued wait's handle instead (ThreadContext::start).
inline constexpr Settlement kPending = 6;
inline constexpr Settlement kNotEqual = 7;  // a futex wait found another value than expected
inline constexpr Settlement kNotOwner = 8;  // a wait that needs a held mutex found it not held
// The lock was acquired, but its previous owner had ended holding it; which owner is reported
// through ThreadContext::report_ended_owner() just before (JavaScript asks endedOwner()).
inline constexpr Settlement kOwnerDied = 9;
// A barrier wait completed its generation: the party that arrived last (kAcquired is the others).
inline constexpr Settlement kLeader = 10;
// A blocking lock wait closed a cycle of threads each waiting for a lock the next one holds, and
// this thread is the one that gives up (addon/waits_for.h); JavaScript asks deadlockCycle().
inline constexpr Settlement kDeadlock = 11;

// Never reaches JavaScript: a blocking wait gave up because its thread is being terminated, and
// the pending termination exception unwinds the caller instead.
inline constexpr Settlement kInterrupted = 0;

}  // namespace settled
}  // namespace parklock::binding
