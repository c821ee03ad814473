#include "across_processes/relay_shard.h"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>

#include "across_processes/cross_process.h"
#include "across_processes/shared_region.h"
#include "lot/atomic_ref.h"

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

// Without futex_waitv (Linux before 5.16): the words are compared every millisecond.
void poll_once(const std::vector<Watched>& keys, const std::vector<std::int32_t>& values) {
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (word_at(keys[i].key) != values[i]) look_again(keys[i]);
  }
}

// The shard's keys now, after dropping those nobody here waits on any more: a waiter that queues
// there again calls watch() again, which adds the key back. A key whose word is not as expected
// gets its oldest waiter woken to look again, and the word as read becomes what is expected.
void take_stock(RelayShard& shard, std::mutex& lock, std::vector<Watched>& keys,
                std::vector<std::int32_t>& values) {
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

void RelayShard::announce() noexcept {
  atomic_ref<std::uint32_t>(changed).fetch_add(1, std::memory_order_release);
  syscall(SYS_futex, &changed, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

void run_shard(RelayShard& shard, std::mutex& lock) noexcept {
  auto next_poll = std::chrono::steady_clock::now() + kOwnerPollInterval;
  bool have_waitv = true;
  std::vector<Watched> keys;
  std::vector<std::int32_t> values;
  std::vector<FutexWaitv> words;
  keys.reserve(kKeysPerShard);
  values.reserve(kKeysPerShard);
  words.reserve(kMostFutexWaitvWords);
  for (;;) {
    const std::uint32_t changed =
        atomic_ref<std::uint32_t>(shard.changed).load(std::memory_order_acquire);
    take_stock(shard, lock, keys, values);
    if (keys.empty()) {
      // Nothing to watch: no wake-ups at all until a waiter queues on a key of this shard, which
      // watch() announces by bumping `changed`.
      syscall(SYS_futex, &shard.changed, FUTEX_WAIT_PRIVATE, changed, nullptr, nullptr, 0);
      continue;
    }
    if (std::chrono::steady_clock::now() >= next_poll) {
      look_at_holders(keys);
      next_poll = std::chrono::steady_clock::now() + kOwnerPollInterval;
    }
    if (!have_waitv) {
      poll_once(keys, values);
      continue;
    }
    words.clear();
    words.push_back(futex_waitv_word(&shard.changed, static_cast<std::int32_t>(changed), false));
    for (std::size_t i = 0; i < keys.size(); ++i) {
      words.push_back(futex_waitv_word(word_of(keys[i].key), values[i], true));
    }
    const long woken = futex_waitv(words.data(), words.size(), kOwnerPollInterval);
    if (woken > 0) {
      // A release elsewhere: the waiters here that it may concern look again.
      look_again(keys[static_cast<std::size_t>(woken) - 1]);
    } else if (woken < 0 && errno == ENOSYS) {
      have_waitv = false;
    }
    // 0: a key was added or a waiter queued at another value; EAGAIN: some word changed before
    // the shard slept, which take_stock() finds; ETIMEDOUT: time to look at the holders.
  }
}

}  // namespace parklock::cross_process

#endif
