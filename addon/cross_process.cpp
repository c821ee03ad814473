#include "cross_process.h"

#include <algorithm>
#include <mutex>
#include <thread>
#include <vector>

#include "atomic_ref.h"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#endif

namespace parklock::cross_process {

#if defined(__linux__)

namespace {

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

// The kernel's struct futex_waitv (Linux 5.16), spelled out for older headers.
struct FutexWaitv {
  std::uint64_t value;
  std::uint64_t address;
  std::uint32_t flags;
  std::uint32_t reserved;
};
constexpr std::uint32_t kFutex2SizeU32 = 0x02;
constexpr std::uint32_t kFutex2Private = 128;
// futex_waitv takes at most this many words: the relay's own and 127 keys.
constexpr std::size_t kMostWords = 128;

struct Watched {
  const void* key;
  const WaitSite* site;
  // A use of the key's region (shared_region.h), so that it stays mapped while the relay looks
  // at the word, also after the last waiter here left it.
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

// Never destroyed: the relay runs until the process exits.
struct Relay {
  std::mutex lock;
  std::vector<Watched> watched;  // guarded by `lock`
  bool started = false;          // guarded by `lock`
  std::uint32_t changed = 0;     // bumped (atomically) when a key is added: the relay's own word
};

Relay& relay() {
  static auto* state = new Relay();
  return *state;
}

std::int32_t load_word(const void* key) {
  return word_at(key);
}

// Set on the relay's thread: what it wakes passes on a change that every process's relay sees.
thread_local bool relaying = false;

void look_again(const Watched& watched) {
  watched.site->look_again(watched.key);
}

// A holder that ended (its process died): its oldest local waiter takes the lock over.
void look_at_holders(const std::vector<Watched>& keys) {
  for (const Watched& w : keys) {
    if (w.site->holder == nullptr) continue;
    const ThreadId holder = w.site->holder(w.key);
    if (holder != kNoThread && shared_region::owner_ended(w.site->address(w.key), holder)) {
      look_again(w);
    }
  }
}

// Without futex_waitv (Linux before 5.16): the words are compared every millisecond.
void poll_once(const std::vector<Watched>& keys, const std::vector<std::int32_t>& values) {
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (load_word(keys[i].key) != values[i]) look_again(keys[i]);
  }
}

// The keys watched now (up to the most futex_waitv takes), after dropping those nobody here waits
// on any more: a waiter that queues there again calls watch() again, which adds the key back. A
// key whose word is not as expected gets its oldest waiter woken to look again, and the word as
// read becomes what is expected.
void take_stock(Relay& state, std::vector<Watched>& keys, std::vector<std::int32_t>& values) {
  keys.clear();
  values.clear();
  std::vector<Watched> stale;
  std::vector<shared_region::Region*> unwatched;
  {
    const std::lock_guard<std::mutex> guard(state.lock);
    auto& list = state.watched;
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&unwatched](const Watched& w) {
                                if (parking_lot::queued_count(w.key) != 0) return false;
                                unwatched.push_back(w.region);
                                return true;
                              }),
               list.end());
    for (Watched& w : list) {
      if (keys.size() + 1 == kMostWords) break;
      const std::int32_t now = load_word(w.key);
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
  for (shared_region::Region* region : unwatched) {
    if (region != nullptr) shared_region::release(region);
  }
}

void run_relay() {
  relaying = true;
  Relay& state = relay();
  auto next_poll = std::chrono::steady_clock::now() + kOwnerPollInterval;
  bool have_waitv = true;
  std::vector<Watched> keys;
  std::vector<std::int32_t> values;
  std::vector<FutexWaitv> words;
  for (;;) {
    const std::uint32_t changed =
        atomic_ref<std::uint32_t>(state.changed).load(std::memory_order_acquire);
    take_stock(state, keys, values);
    if (keys.empty()) {
      // Nothing to watch: no wake-ups at all until a waiter queues on a shared key, which
      // watch() announces by bumping `changed`.
      syscall(SYS_futex, &state.changed, FUTEX_WAIT_PRIVATE, changed, nullptr, nullptr, 0);
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
    words.push_back({changed, reinterpret_cast<std::uintptr_t>(&state.changed),
                     kFutex2SizeU32 | kFutex2Private, 0});
    for (std::size_t i = 0; i < keys.size(); ++i) {
      words.push_back({static_cast<std::uint32_t>(values[i]),
                       reinterpret_cast<std::uintptr_t>(word_of(keys[i].key)), kFutex2SizeU32, 0});
    }
    timespec until{};
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += std::chrono::nanoseconds(kOwnerPollInterval).count();
    if (until.tv_nsec >= 1000000000) {
      until.tv_sec += 1;
      until.tv_nsec -= 1000000000;
    }
    const long woken =
        syscall(SYS_futex_waitv, words.data(), words.size(), 0, &until, CLOCK_MONOTONIC);
    if (woken > 0) {
      // A release elsewhere: the waiters here that it may concern look again.
      look_again(keys[static_cast<std::size_t>(woken) - 1]);
    } else if (woken < 0 && errno == ENOSYS) {
      have_waitv = false;
    }
    // 0: a key was added or a waiter queued at another value; EAGAIN: some word changed before
    // the relay slept, which take_stock() finds; ETIMEDOUT: time to look at the holders.
  }
}

}  // namespace

void watch(const void* key, const WaitSite* site, std::int32_t seen) noexcept {
  if (site == nullptr || site->look_again == nullptr) return;
  Relay& state = relay();
  {
    const std::lock_guard<std::mutex> guard(state.lock);
    auto found = std::find_if(state.watched.begin(), state.watched.end(),
                              [key](const Watched& w) { return w.key == key; });
    if (found != state.watched.end()) {
      if (found->expected == seen) return;
      found->expected = seen;
      found->changed_since = true;
    } else {
      // The caller waits on the key, so it holds a use of its region already.
      shared_region::Region* region = shared_region::region_at(key);
      if (region != nullptr) shared_region::retain(region);
      state.watched.push_back({key, site, region, seen});
    }
    if (!state.started) {
      try {
        std::thread(run_relay).detach();
        state.started = true;
      } catch (...) {
        // No thread to be had: the next waiter to queue tries again.
      }
    }
  }
  atomic_ref<std::uint32_t>(state.changed).fetch_add(1, std::memory_order_release);
  syscall(SYS_futex, &state.changed, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

void wake_others(const void* key) noexcept {
  if (relaying) return;
  syscall(SYS_futex, word_of(key), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

#else

void watch(const void*, const WaitSite*, std::int32_t) noexcept {}
void wake_others(const void*) noexcept {}

#endif

}  // namespace parklock::cross_process
