#include "across_processes/cross_process.h"

#include "across_processes/mechanism.h"

#if defined(PARKLOCK_ACROSS_PROCESSES)
#include <deque>
#include <mutex>
#include <thread>

#include "across_processes/doorbell.h"
#include "across_processes/relay_shard.h"
#include "os/word_wait.h"
#endif

namespace parklock::cross_process {

#if defined(PARKLOCK_ACROSS_PROCESSES)

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

// The first shard with room for another key of `region`; a new one when none has. With the
// doorbell, a shard's keys share a region (relay_shard.h).
RelayShard& shard_with_room(Relay& state, const shared_region::Region* region) {
  const bool one_region = uses_doorbell();
  for (RelayShard& shard : state.shards) {
    if (shard.watched.size() >= kKeysPerShard) continue;
    if (one_region && !shard.watched.empty() && shard.region != region) continue;
    return shard;
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
      // The caller waits on the key, so it holds a use of its region already.
      shared_region::Region* region = shared_region::region_at(key);
      told = &shard_with_room(state, region);
      if (region != nullptr) shared_region::retain(region);
      if (told->watched.empty()) told->region = region;
      told->watched.push_back({key, site, region, seen});
    }
    start_threads(state);
  }
  told->announce(key);
}

void wake_others(const void* key) noexcept {
  if (relaying) return;
  if (uses_doorbell()) {
    ring(shared_region::doorbell_place(word_of(key)), word_of(key));
  } else {
    os::wake_all_on_word(reinterpret_cast<const std::uint32_t*>(word_of(key)), /*shared=*/true);
  }
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
