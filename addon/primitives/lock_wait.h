// What the locks that record their owner (the mutex, the RWLock, the Once) share on their slow
// paths: the vocabulary of a lock attempt. Their blocking waits watch for a self-deadlock and a
// deadlock with other threads through their step's LockWatch (wait_step.h).
#pragma once

#include "lot/owner_death.h"
#include "lot/wait_step.h"

namespace parklock {

// How a lock wait ended (wait_step.h): kOwnerDied acquired from an owner that ended holding the
// lock (owner_death.h); kAlreadyHeld: the calling thread holds it (or one of its Promise waits
// was handed it while the thread blocked here); kDeadlock: the thread gave up a cycle of blocked
// lock waits (waits_for.h; take_deadlock_cycle() says which).
using LockStatus = Outcome;

// What one step of a thread that does not hold the lock did with the word it read: acquired it,
// lost a race (read the word again), announced itself as a waiter, or found a corrupt word.
enum class Attempt { kAcquired, kRetry, kContended, kCorrupt };

}  // namespace parklock
