// Waits that cross processes: the second place a waiter on a shared region's word parks.
//
// A waiter always queues in its own process's parking lot, so every protocol, the FIFO order
// among a process's waiters, Promise waits, timeouts, cancels and interrupts work unchanged. For a
// key in a region other processes map (shared_region.h), the lot adds four rules:
//   - It never tells a primitive that a key's queue is empty, neither to `decide` (has_more) nor
//     to a Grant's `finish`: other processes may have waiters the lot cannot see, so the word
//     keeps saying "waiters may be parked" and every release takes the slow path.
//   - Every release that wakes waiters here also wakes the other processes' relays (wake_others),
//     through the kernel futex on the key's word (a process-shared futex, keyed by the file page).
//   - While a process has waiters on a shared key, a relay thread sleeps on that word
//     (futex_waitv, with the words of other such keys). futex_waitv takes at most 128 words, so
//     the relay is sharded (relay_shard.h): a thread per 127 keys, however many the process waits
//     on, and a key stays with one thread while waiters here wait on it. Woken by a release, or
//     finding the word changed, it runs the primitive's WaitSite::look_again, which wakes the
//     local waiters the change may concern to look at the word again (a mutex's oldest, a
//     semaphore's that the permits cover, every waiter of a latch), keeping it marked as having
//     waiters. They compete for what was released with the other processes' waiters: waiters
//     are served in order within a process, and no process can keep the others' waiters from
//     competing. What the relay does passes on a change that every relay saw, so it wakes no
//     other process's relay.
//     The oldest blocking waiter of a key in each process sleeps on the word itself as well
//     (BlockingWaiter::park()), so that a release elsewhere reaches it with one wake-up instead
//     of the relay's two; woken so, it does what the relay does. The relay still watches:
//     nothing waits on that shortcut alone.
//     A waiter that queues tells the relay the word as it read it before checking it; a word
//     that reads otherwise by the time the relay sleeps has changed since, perhaps by a release
//     that woke no relay here, and the waiters look again; so do they when a waiter queues having
//     seen another value than the one before it (the change may concern that earlier waiter).
//   - A grant step never takes a fair turn (parking_lot::FairTurn): the fairness timer is this
//     process's, and what a fair turn marks in the word (a semaphore's permits set aside for the
//     head) would outlive a process that dies.
// Each relay thread also looks every kOwnerPollInterval at the holders of the words it watches: a
// holder whose process died (shared_region.h) gets its oldest local waiter woken to take the lock
// over. That bounds how soon a waiter learns of a SIGKILLed holder; a newcomer learns at once.
#pragma once

#include <chrono>
#include <cstdint>

#include "across_processes/shared_region.h"
#include "lot/atomic_ref.h"
#include "lot/parking_lot.h"

namespace parklock::cross_process {

inline constexpr std::chrono::milliseconds kOwnerPollInterval{20};

// Whether `key` lies in a region that other processes may map (one relaxed load when none is).
inline bool is_shared(const void* key) noexcept {
  return shared_region::any_mapped() && shared_region::region_at(key) != nullptr;
}

// After a waiter queued on the shared `key` of a primitive of `site`, having read its word as
// `seen` before it checked it: the relay watches the key, and wakes that waiter to look again if
// the word no longer reads `seen` (a release may have come before the relay slept on it).
void watch(const void* key, const WaitSite* site, std::int32_t seen) noexcept;

// After a release on the shared `key`: wakes every process's relay that sleeps on it. Not one:
// the relay woken might belong to a process whose waiters have just left, and the release would
// reach nobody.
void wake_others(const void* key) noexcept;

// What the relay does when the word of the shared `key`, of a primitive of `site`, has changed
// (WaitSite::look_again), done by a blocking waiter that was watching the word itself
// (BlockingWaiter::park()): like the relay's, what it wakes passes on a change that every
// process saw, so it wakes no other process.
void look_again_here(const void* key, const WaitSite* site) noexcept;

// Stops the relay threads from waking any waiter (and resumes them), process-wide: for tests of
// what reaches a waiter without them. Changes they pass over meanwhile are not made up for.
void pause_relay_for_testing(bool paused) noexcept;

// The word a key waits on, which the kernel futex and the relay watch: every key lies within the
// 4 bytes of its word (a mutex's or a semaphore's is the word, a futex key one byte past it).
inline const std::int32_t* word_of(const void* key) noexcept {
  return reinterpret_cast<const std::int32_t*>(reinterpret_cast<std::uintptr_t>(key) &
                                               ~std::uintptr_t{3});
}

// The word of a shared key, as watch() wants it.
inline std::int32_t word_at(const void* key) noexcept {
  return atomic_ref<const std::int32_t>(*word_of(key)).load(std::memory_order_acquire);
}

}  // namespace parklock::cross_process
