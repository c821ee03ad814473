// Futex-style wait/notify on any 32-bit word, through the parking lot.
//
// Shared-memory layout: the caller's word; futex adds nothing to it. wait() sleeps only while the
// word holds `expected` (checked under the bucket lock, so a notify that follows a change of the
// word cannot be missed), and notify() wakes waiters oldest first.
//
// These waiters live in parklock's own queues: Atomics.notify does not wake them, and notify() does
// not wake Atomics.wait. A word should be waited on through one of the two, not both.
//
// Futex waiters have a key space of their own: they queue on key(word), one byte past the word,
// which is never the address of a 4-aligned word that another primitive parks on. So futex calls
// on a Mutex's, Semaphore's or RWLock's word cannot wake that primitive's waiters with a token
// they would read as a grant, nor stand in its queue.
#pragma once

#include <cstddef>
#include <cstdint>

#include "deadline.h"
#include "parking_lot.h"

namespace parklock::futex {

enum class WaitStatus { kWoken, kNotEqual, kTimedOut, kInterrupted };

inline const void* key(const std::int32_t* word) noexcept {
  return reinterpret_cast<const char*>(word) + 1;
}

// The token notify() wakes a waiter with.
inline constexpr WakeToken kNotified = 5 * kTokenSpaceSize;

// The primitive's word for a futex key: WaitSite::address of every site on futex keys.
const void* word_of(const void* key) noexcept;

// The site of bare futex waiters. A primitive built on the futex (the latch, the barrier) names
// its own, with word_of as its address, so that diagnostics show what the waiter waits in.
extern const WaitSite kWaitSite;

WaitStatus wait(const std::int32_t* word, std::int32_t expected,
                Deadline deadline = Deadline::never(), const WaitSite* site = &kWaitSite);

// Queues an asynchronous waiter if the word holds `expected`; false (not queued) otherwise.
bool enqueue_if_equal(const std::int32_t* word, std::int32_t expected, Waiter& waiter,
                      const WaitSite* site = &kWaitSite);

// Wakes up to `count` waiters of `word`; returns how many.
std::size_t notify(const std::int32_t* word, std::size_t count);

// How many futex waiters `word` has (a snapshot: for tests and diagnostics).
std::size_t queued_count(const std::int32_t* word);

}  // namespace parklock::futex
