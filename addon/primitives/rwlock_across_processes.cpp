// The RWLock in memory other processes share (shared_region.h, cross_process.h).
//
// Within a process, the release of a parked lock grants it to the oldest waiters under the bucket
// lock, deciding on a word that nothing else may change meanwhile (rwlock.cpp, "Why a grant never
// acts on a stale word"). Across processes that decision cannot be made: each process has its own
// queues under its own bucket locks, and two processes granting at once would both act on one
// word. So in a region nobody grants; waiters compete, as a Mutex's do there:
//   - The parked bit means "waiters may be queued, in some process". Newcomers still refuse to
//     join while it is set, so that readers arriving keep no waiting writer out for ever, and
//     every release that finds it set takes the slow path.
//   - The slow-path release gives back its hold by CAS. If that frees the lock, the parked bit goes
//     with it: a free lock never keeps the bit, since no process can tell whether anybody else
//     still waits (and a free word with only the bit would turn every newcomer away). It then
//     wakes every waiter of this process on the lock, and through the kernel futex on the state
//     word each other process's relay, which wakes that process's waiters (look_again()).
//   - A woken waiter (kLookAgain) competes: it takes the lock if its mode allows, whether or not
//     the parked bit is set, and sets the bit as it takes it (others may still wait); otherwise
//     it marks the bit and queues again. Newcomers that find the lock free compete with it.
//   - A writer refused beside readers alone drains them at once (begin_drain_in_region()): the
//     draining bit keeps every reader out, woken ones included, so that readers of several
//     processes taking turns cannot keep a writer waiting for ever; the owner word names the
//     draining writer, so that the drain of a process that died is ended by whoever finds it
//     (end_ended_drain(), and the relay, to which holder_at() names the drainer). The drain, the
//     upgrader's too, waits on the lock's own queue, where it is woken with the others and looks
//     whether the readers it waits for have left.
//   - A waiter that leaves (timeout, abort, interrupt) grants nothing, but wakes the waiters here
//     and the other processes' relays: the parked bit it leaves set would otherwise keep readers
//     out while readers hold the lock, until they all left. A wake-up given up owes nothing: every
//     waiter here was woken with it, and every other process's relay too.
// The price: every waiter of a process wakes on each release that concerns it, and the order is a
// race, within a process as between processes. Owner death: the owner word names region
// identities, whose end take_from_ended_owner() sees (shared_region::owner_ended), and the relay
// looks at the holder of every lock it watches each kOwnerPollInterval.
#include <optional>

#include "across_processes/cross_process.h"
#include "across_processes/shared_region.h"
#include "primitives/rwlock.h"

namespace parklock {

bool RwLockWords::in_region() const noexcept {
  return cross_process::is_shared(address());
}

const void* RwLockWords::drain_wait_key() const noexcept {
  return in_region() ? address() : drain_key();
}

void RwLockWords::look_again(const void* address) noexcept {
  wake_to_look_again(address, nullptr);
}

void RwLockWords::wake_to_look_again(const void* address, parking_lot::Wakeups* deferred) noexcept {
  const auto everyone = [](std::int64_t) -> std::optional<WakeToken> { return kLookAgain; };
  const auto nothing_to_record = [](bool) {};
  const FunctionRef<std::optional<WakeToken>(std::int64_t)> offer = everyone;
  parking_lot::unpark_filter(address, parking_lot::Grant{&offer, nothing_to_record}, deferred);
}

void RwLockWords::release_in_region(std::int32_t released,
                                    parking_lot::Wakeups* deferred) noexcept {
  std::int32_t seen = state().load(std::memory_order_relaxed);
  while (released != 0) {
    // Modulo 2^32, as the grant step computes it: a downgrade gives back a negative amount.
    auto next = static_cast<std::int32_t>(static_cast<std::uint32_t>(seen) -
                                          static_cast<std::uint32_t>(released));
    if (!is_held(next)) next = 0;
    if (state().compare_exchange_weak(seen, next, std::memory_order_release,
                                      std::memory_order_relaxed)) {
      break;
    }
  }
  wake_to_look_again(address(), deferred);
}

void RwLockWords::end_drain_in_region(parking_lot::Wakeups* deferred) noexcept {
  std::int32_t seen = state().load(std::memory_order_relaxed);
  while ((seen & kDraining) != 0) {
    std::int32_t next = seen & ~kDraining;
    if (!is_held(next)) next = 0;
    if (state().compare_exchange_weak(seen, next, std::memory_order_release,
                                      std::memory_order_relaxed)) {
      wake_to_look_again(address(), deferred);
      return;
    }
  }
}

void RwLockWords::end_own_drain_in_region(ThreadId self, parking_lot::Wakeups* deferred) noexcept {
  const std::int32_t seen = state().load(std::memory_order_acquire);
  if ((seen & kDraining) == 0) return;
  if ((seen & kUpgradable) != 0) {
    // An upgrader's drain is part of its hold, whose owner word stays: ended here while the hold
    // is still this thread's, and otherwise with the hold, by whoever releases it once its
    // thread has ended (a wake-up given up after that end must not end the next upgrader's).
    if (owner().load(std::memory_order_acquire) != self ||
        shared_region::owner_ended(address(), self)) {
      return;
    }
    end_drain_in_region(deferred);
    return;
  }
  // A writer's drain: ended by whoever claims the name, this writer or end_ended_drain().
  ThreadId mine = self;
  if (!owner().compare_exchange_strong(mine, kNoThread, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
    return;
  }
  end_drain_in_region(deferred);
}

void RwLockWords::release_upgradable_in_region() noexcept {
  std::int32_t seen = state().load(std::memory_order_relaxed);
  for (;;) {
    std::int32_t next = seen - kUpgradable - kOneReader - (seen & kDraining);
    if (!is_held(next)) next = 0;
    if (state().compare_exchange_weak(seen, next, std::memory_order_release,
                                      std::memory_order_relaxed)) {
      break;
    }
  }
  wake_to_look_again(address(), nullptr);
}

bool RwLockWords::begin_drain_in_region(ThreadId self) noexcept {
  if (!in_region()) return false;
  std::int32_t seen = state().load(std::memory_order_relaxed);
  for (;;) {
    // Held by readers alone: not by a writer, nor beside an upgradable hold (whose holder may
    // drain them itself), nor already drained by another writer.
    if (is_corrupt(seen) || readers_of(seen) == 0 ||
        (seen & (kWriter | kUpgradable | kDraining)) != 0) {
      return false;
    }
    if (state().compare_exchange_weak(seen, seen | kDraining | kParked, std::memory_order_acquire,
                                      std::memory_order_relaxed)) {
      // Named after the bit, as a writer is: nobody else writes the owner word while it is set.
      owner().store(self, std::memory_order_relaxed);
      return true;
    }
  }
}

}  // namespace parklock
