// One thread of the relay (cross_process.h) and the shared keys it watches.
//
// futex_waitv sleeps on at most 128 words, so the relay is sharded: each shard is a thread that
// sleeps on its own `changed` word and the words of at most kKeysPerShard keys. With the doorbell
// (mechanism.h), a shard's keys all lie in one region, and its thread sleeps on the region's
// doorbell (doorbell.h) instead, or on `changed` while it has no keys. A key belongs to
// one shard, from the watch() that puts it there until its shard's thread finds nobody here
// waiting on it and drops it; it never moves to another shard meanwhile, so that exactly one
// thread compares its word with what its waiters saw, and no hand-over between threads can miss
// a change. A shard and its thread are never destroyed: without keys the thread sleeps on
// `changed` alone until watch() gives it one.
#pragma once

#include "across_processes/mechanism.h"

#if defined(PARKLOCK_ACROSS_PROCESSES)
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "across_processes/shared_region.h"
#include "lot/parking_lot.h"

namespace parklock::cross_process {

// futex_waitv's words (os/futex_waitv.h), less the shard's own.
inline constexpr std::size_t kKeysPerShard = 127;

struct Watched {
  const void* key;
  const WaitSite* site;
  // A use of the key's region (shared_region.h), so that it stays mapped while the relay looks
  // at the word, also after the last waiter here left it; given back as the key is dropped.
  shared_region::Region* region;
  // The word as the latest waiter to queue here saw it before it checked it, or as the relay
  // last woke waiters to look at it: a word that reads otherwise has changed since, and a
  // release among those changes may have woken no relay here.
  std::int32_t expected;
  // A waiter queued having seen another value than `expected`: the word changed since an earlier
  // waiter read it, perhaps by a release that woke no relay here, and that waiter may sleep
  // through it (while only it can make the next change: a draining writer). Neither value alone
  // tells, since the word may read as before again: the waiters look again at once.
  bool changed_since = false;
};

// The lists and flags are guarded by the relay's one lock, which every shard shares with
// watch(): a key is looked for in all shards, and added to one, in one step.
struct RelayShard {
  std::vector<Watched> watched;  // at most kKeysPerShard
  bool started = false;          // its thread runs
  // The region of the first key watched; null while there is none. With the doorbell every key
  // of the shard lies there.
  const shared_region::Region* region = nullptr;
  // The thread's own word: bumped (atomically) and woken when watch() changes `watched`.
  std::uint32_t changed = 0;

  // Tells the shard's thread that `watched` changed, for `key`, whose region the caller holds a
  // use of; call without the lock.
  void announce(const void* key) noexcept;
};

// The body of `shard`'s thread, which never returns; `lock` guards the shard's fields.
[[noreturn]] void run_shard(RelayShard& shard, std::mutex& lock) noexcept;

}  // namespace parklock::cross_process

#endif
