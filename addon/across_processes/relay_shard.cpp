#include "across_processes/relay_shard.h"

#if defined(PARKLOCK_ACROSS_PROCESSES)
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>

#include "across_processes/cross_process.h"
#include "across_processes/doorbell.h"
#include "across_processes/shared_region.h"
#include "lot/atomic_ref.h"
#include "os/word_wait.h"

#if defined(__linux__)
#include "os/futex_waitv.h"
static_assert(parklock::cross_process::kKeysPerShard ==
              parklock::cross_process::kMostFutexWaitvWords - 1);
#endif

namespace parklock::cross_process {

namespace {

std::atomic<bool> paused{false};

void look_again(const Watched& watched) {
  if (paused.load(std::memory_order_relaxed)) return;
  watched.site->look_again(watched.key);
}

// A holder that ended (its process died): its oldest local waiter takes the lock over. Words
// often share a holder (a thread holding many locks), and asking whether another process's
// holder lives is a system call: each live one is asked about once per look. One that dies
// during the look is found by the next, as one that dies just after it.
void look_at_holders(const std::vector<Watched>& keys) {
  struct Holder {
    const shared_region::Region* region;
    ThreadId thread;
  };
  std::vector<Holder> alive;
  for (const Watched& w : keys) {
    if (w.site->holder == nullptr) continue;
    const ThreadId holder = w.site->holder(w.key);
    if (holder == kNoThread) continue;
    const void* address = w.site->address(w.key);
    const Holder found{shared_region::region_at(address), holder};
    const auto same = [&found](const Holder& h) {
      return h.region == found.region && h.thread == found.thread;
    };
    if (std::any_of(alive.begin(), alive.end(), same)) continue;
    if (shared_region::owner_ended(address, holder)) {
      look_again(w);
    } else {
      alive.push_back(found);
    }
  }
}

#if defined(__linux__)
// Without futex_waitv (Linux before 5.16): the words are compared every millisecond.
void poll_once(const std::vector<Watched>& keys, const std::vector<std::int32_t>& values) {
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (word_at(keys[i].key) != values[i]) look_again(keys[i]);
  }
}
#endif

// With the doorbell: where the shard last read its region's count of rings, what it read, and
// its thread's place among the doorbell's sleepers.
struct RingsSeen {
  const shared_region::Region* region = nullptr;
  shared_region::DoorbellPlace doorbell;
  std::uint32_t count = 0;
  DoorbellSleeper sleeper;
};

// The shard's keys now, after dropping those nobody here waits on any more: a waiter that queues
// there again calls watch() again, which adds the key back. A key whose word is not as expected
// gets its oldest waiter woken to look again, and the word as read becomes what is expected.
// `rings` (the doorbell's shards): the count of rings of a region new to the shard is read before
// its words are, so that a ring after that reading is one the thread looks at.
void take_stock(RelayShard& shard, std::mutex& lock, std::vector<Watched>& keys,
                std::vector<std::int32_t>& values, RingsSeen* rings = nullptr) {
  keys.clear();
  values.clear();
  std::vector<Watched> stale;
  std::vector<shared_region::Region*> dropped;
  {
    const std::lock_guard<std::mutex> guard(lock);
    auto& list = shard.watched;
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&dropped](const Watched& w) {
                                if (parking_lot::queued_count(w.key) != 0) return false;
                                dropped.push_back(w.region);
                                return true;
                              }),
               list.end());
    if (list.empty()) shard.region = nullptr;
    if (rings != nullptr && rings->region != shard.region) {
      // Before the region's last use here goes (`dropped`, below).
      rings->sleeper.leave();
      rings->region = shard.region;
      rings->doorbell = list.empty() ? shared_region::DoorbellPlace{}
                                     : shared_region::doorbell_place(word_of(list.front().key));
      if (rings->doorbell.rings != nullptr) {
        rings->count =
            atomic_ref<std::uint32_t>(*rings->doorbell.rings).load(std::memory_order_acquire);
      }
    }
    for (Watched& w : list) {
      const std::int32_t now = word_at(w.key);
      if (now != w.expected || w.changed_since) {
        stale.push_back(w);
        w.expected = now;
        w.changed_since = false;
      }
      keys.push_back(w);
      values.push_back(now);
    }
  }
  for (const Watched& w : stale) look_again(w);
  // Outside the lock: the last use unmaps the region.
  for (shared_region::Region* region : dropped) {
    if (region != nullptr) shared_region::release(region);
  }
}

}  // namespace

void pause_relay_for_testing(bool pause) noexcept {
  paused.store(pause, std::memory_order_relaxed);
}

void RelayShard::announce(const void* key) noexcept {
  atomic_ref<std::uint32_t>(changed).fetch_add(1, std::memory_order_release);
  os::wake_all_on_word(&changed, /*shared=*/false);
  // A thread asleep on the doorbell wakes only by a ring.
  if (uses_doorbell()) cross_process::announce(shared_region::doorbell_place(word_of(key)));
}

namespace {

// What a shard's thread works with, round after round.
struct ShardRound {
  std::vector<Watched> keys;
  std::vector<std::int32_t> values;
  std::chrono::steady_clock::time_point next_poll =
      std::chrono::steady_clock::now() + kOwnerPollInterval;
  // `changed` as read before the keys: a bump since then ends the thread's sleep.
  std::uint32_t changed = 0;

  ShardRound() {
    keys.reserve(kKeysPerShard);
    values.reserve(kKeysPerShard);
  }

  // The start of a round, for either mechanism: the shard's keys (take_stock()), and a look at
  // their holders when one is due. False when the shard has none, after the thread slept until
  // watch() gave it some.
  bool keys_to_watch(RelayShard& shard, std::mutex& lock, RingsSeen* rings = nullptr) {
    changed = atomic_ref<std::uint32_t>(shard.changed).load(std::memory_order_acquire);
    take_stock(shard, lock, keys, values, rings);
    if (keys.empty()) {
      // No wake-ups at all until a waiter queues on a key of this shard, which watch()
      // announces by bumping `changed`.
      os::wait_on_word(&shard.changed, changed, std::chrono::hours(1), /*shared=*/false);
      return false;
    }
    if (std::chrono::steady_clock::now() >= next_poll) {
      look_at_holders(keys);
      next_poll = std::chrono::steady_clock::now() + kOwnerPollInterval;
    }
    return true;
  }
};

// Sleeps on the words of the shard's keys and its own `changed` at once.
#if defined(__linux__)
[[noreturn]] void run_futex_waitv_shard(RelayShard& shard, std::mutex& lock) noexcept {
  ShardRound round;
  bool have_waitv = true;
  std::vector<FutexWaitv> words;
  words.reserve(kMostFutexWaitvWords);
  for (;;) {
    if (!round.keys_to_watch(shard, lock)) continue;
    if (!have_waitv) {
      poll_once(round.keys, round.values);
      continue;
    }
    words.clear();
    words.push_back(
        futex_waitv_word(&shard.changed, static_cast<std::int32_t>(round.changed), false));
    for (std::size_t i = 0; i < round.keys.size(); ++i) {
      words.push_back(futex_waitv_word(word_of(round.keys[i].key), round.values[i], true));
    }
    const long woken = futex_waitv(words.data(), words.size(), kOwnerPollInterval);
    if (woken > 0) {
      // A release elsewhere: the waiters here that it may concern look again.
      look_again(round.keys[static_cast<std::size_t>(woken) - 1]);
    } else if (woken < 0 && errno == ENOSYS) {
      have_waitv = false;
    }
    // 0: a key was added or a waiter queued at another value; EAGAIN: some word changed before
    // the shard slept, which take_stock() finds; ETIMEDOUT: time to look at the holders.
  }
}
#endif

// Sleeps on the doorbell of the region of the shard's keys (doorbell.h).
[[noreturn]] void run_doorbell_shard(RelayShard& shard, std::mutex& lock) noexcept {
  ShardRound round;
  RingsSeen rings;
  for (;;) {
    if (!round.keys_to_watch(shard, lock, &rings)) continue;
    // The keys hold uses of the region until the next take_stock(): the doorbell stays mapped.
    const std::uint32_t now =
        atomic_ref<std::uint32_t>(*rings.doorbell.rings).load(std::memory_order_acquire);
    if (now == rings.count) {
      rings.sleeper.sleep(rings.doorbell, now, kOwnerPollInterval);
      continue;
    }
    const Rung rung = rung_between(rings.doorbell, rings.count, now);
    rings.count = now;
    const std::uint32_t* named_end = rung.words + rung.count;
    for (const Watched& w : round.keys) {
      const std::uint32_t index = word_index(rings.doorbell, word_of(w.key));
      if (rung.every || std::find(rung.words, named_end, index) != named_end) look_again(w);
    }
  }
}

}  // namespace

void run_shard(RelayShard& shard, std::mutex& lock) noexcept {
#if defined(__linux__)
  if (!uses_doorbell()) run_futex_waitv_shard(shard, lock);
#endif
  run_doorbell_shard(shard, lock);
}

}  // namespace parklock::cross_process

#endif
