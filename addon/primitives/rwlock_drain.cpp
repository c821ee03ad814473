// The RWLock's draining writer (rwlock.cpp, "The drain"): the upgrader, the writer granted the
// drain, or a writer that found readers alone (begin_drain()), waiting on a key of its own for the
// read holds to leave.
#include "primitives/rwlock.h"
#include "primitives/spin.h"

namespace parklock {

namespace {
// The drain key is the owner word, one word after the state word.
const void* state_word_of_drain_key(const void* key) noexcept {
  return static_cast<const std::int32_t*>(key) - RwLockWords::kOwnerIndex;
}
ThreadId holder_of_drain_key(const void* key) noexcept {
  return RwLockWords::holder_at(state_word_of_drain_key(key));
}
}  // namespace

// The draining writer is owed no lock when a thread ends: the upgrader holds the lock it waits on,
// and the other waits for readers, which are not recorded per thread.
const WaitSite RwLockWords::kDrainSite{"rwlock", &state_word_of_drain_key, &holder_of_drain_key,
                                       nullptr};

Attempt RwLockWords::take_drained(ThreadId self) noexcept {
  std::int32_t seen = state().load(std::memory_order_relaxed);
  // The draining bit is this writer's alone to clear: without it the word was overwritten.
  if (is_corrupt(seen) || (seen & kDraining) == 0) return Attempt::kCorrupt;
  if (readers_of(seen) > drained_readers(seen)) return Attempt::kContended;
  // Only the parked bit can change beside the drain: nothing is granted while it lasts.
  if (!state().compare_exchange_weak(seen, kWriter | (seen & kParked), std::memory_order_acquire,
                                     std::memory_order_relaxed)) {
    return Attempt::kRetry;
  }
  owner().store(self, std::memory_order_relaxed);
  return Attempt::kAcquired;
}

bool RwLockWords::begin_drain(ThreadId /*self*/) noexcept {
  if (in_region()) return false;
  std::int32_t seen = state().load(std::memory_order_relaxed);
  // Readers alone, nobody queued: no upgradable hold (its holder may drain them itself), no
  // writer, no drain, and no parked bit, without which no grant is under way either. Set outside
  // the bucket lock, as the upgrader sets it while nobody is parked. The owner word stays 0:
  // outside a region a drain is not named.
  while (!is_corrupt(seen) && readers_of(seen) != 0 &&
         (seen & (kWriter | kParked | kUpgradable | kDraining)) == 0) {
    if (state().compare_exchange_weak(seen, seen | kDraining, std::memory_order_acquire,
                                      std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

Outcome RwLockWords::drain_or_enqueue(ThreadId self, Waiter& waiter, Deadline deadline) {
  const auto must_wait = [this] { return must_wait_for_readers(); };
  // In a region the drain waits on the lock's queue, whose wake-ups reach it from any process.
  const WaitSite* site = in_region() ? &kWaitSite : &kDrainSite;
  // The readers it waits for can only leave, and reads are often short: a blocking drain pauses a
  // little before it parks, but never yields. With the yields of other blocking waiters (spin.h)
  // one writer beside four re-entering readers (2 µs reads, 2 cores) left the readers more of the
  // lock (0.69x the reads of a hand-written lock of Atomics, against 0.19x without), but in some
  // runs the writer only 0.02 of the operations: a yield can give the core away for a whole time
  // slice on a busy machine. The writer's share comes first. In a region the drain is woken with
  // every waiter of the lock, as before any pause.
  const int spin_limit = waiter.blocking() && !in_region() ? spin_policy().pause_rounds : 0;
  int spins = 0;
  for (;;) {
    switch (take_drained(self)) {
      case Attempt::kAcquired:
        return Outcome::kAcquired;
      case Attempt::kCorrupt:
        return Outcome::kCorrupt;
      case Attempt::kRetry:
        continue;
      case Attempt::kContended:
        break;
    }
    if (spins < spin_limit) {
      spin_pause(spins++);
      continue;
    }
    if (deadline.expired()) {
      end_drain(self);
      return Outcome::kTimedOut;
    }
    if (parking_lot::enqueue(drain_wait_key(), waiter, must_wait, site)) return Outcome::kPending;
  }
}

void RwLockWords::end_drain(ThreadId self, parking_lot::Wakeups* deferred, bool grant) noexcept {
  if (in_region()) {
    end_own_drain_in_region(self, deferred);
    return;
  }
  std::int32_t seen = state().load(std::memory_order_relaxed);
  while ((seen & kDraining) != 0) {
    // The bit and the grant of the waiters it kept out in one step: the word never shows a free
    // lock with waiters refused.
    if (grant && (seen & kParked) != 0) {
      release_and_grant(kDraining, kNoThread, deferred);
      return;
    }
    if (state().compare_exchange_weak(seen, seen & ~kDraining, std::memory_order_release,
                                      std::memory_order_relaxed)) {
      return;
    }
  }
}

}  // namespace parklock
