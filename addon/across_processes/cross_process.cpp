#include "across_processes/cross_process.h"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <deque>
#include <mutex>
#include <thread>

#include "across_processes/relay_shard.h"
#endif

namespace parklock::cross_process {

#if defined(__linux__)

namespace {

// Never destroyed: the relay runs until the process exits.
struct Relay {
  std::mutex lock;
  // Grows, never shrinks, and never moves a shard: each thread works on its own for ever.
  std::deque<RelayShard> shards;  // guarded by `lock`
};

Relay& relay() {
  static auto* state = new Relay();
  return *state;
}

// Set on the relay's threads: what they wake passes on a change that every process's relay sees.
thread_local bool relaying = false;

struct Found {
  RelayShard* shard = nullptr;
  Watched* watched = nullptr;
};

Found find(Relay& state, const void* key) {
  for (RelayShard& shard : state.shards) {
    for (Watched& w : shard.watched) {
      if (w.key == key) return {&shard, &w};
    }
  }
  return {};
}

// The first shard with room for another key; a new one when none has.
RelayShard& shard_with_room(Relay& state) {
  for (RelayShard& shard : state.shards) {
    if (shard.watched.size() < kKeysPerShard) return shard;
  }
  RelayShard& added = state.shards.emplace_back();
  added.watched.reserve(kKeysPerShard);
  return added;
}

// Starts the thread of every shard that has keys and none yet. No thread to be had: the next
// waiter to queue tries again.
void start_threads(Relay& state) {
  for (RelayShard& shard : state.shards) {
    if (shard.started || shard.watched.empty()) continue;
    try {
      std::thread([&shard, &state] {
        relaying = true;
        run_shard(shard, state.lock);
      }).detach();
      shard.started = true;
    } catch (...) {
      return;
    }
  }
}

}  // namespace

void watch(const void* key, const WaitSite* site, std::int32_t seen) noexcept {
  if (site == nullptr || site->look_again == nullptr) return;
  Relay& state = relay();
  RelayShard* told = nullptr;
  {
    const std::lock_guard<std::mutex> guard(state.lock);
    const Found found = find(state, key);
    if (found.watched != nullptr) {
      if (found.watched->expected == seen) return;
      found.watched->expected = seen;
      found.watched->changed_since = true;
      told = found.shard;
    } else {
      told = &shard_with_room(state);
      // The caller waits on the key, so it holds a use of its region already.
      shared_region::Region* region = shared_region::region_at(key);
      if (region != nullptr) shared_region::retain(region);
      told->watched.push_back({key, site, region, seen});
    }
    start_threads(state);
  }
  told->announce();
}

void wake_others(const void* key) noexcept {
  if (relaying) return;
  syscall(SYS_futex, word_of(key), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

void look_again_here(const void* key, const WaitSite* site) noexcept {
  const bool was_relaying = relaying;
  relaying = true;
  site->look_again(key);
  relaying = was_relaying;
}

#else

void watch(const void*, const WaitSite*, std::int32_t) noexcept {}
void wake_others(const void*) noexcept {}
void look_again_here(const void*, const WaitSite*) noexcept {}
void pause_relay_for_testing(bool) noexcept {}

#endif

}  // namespace parklock::cross_process
