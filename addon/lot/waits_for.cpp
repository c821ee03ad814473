#include "lot/waits_for.h"

#include <algorithm>
#include <mutex>
#include <utility>

namespace parklock {

namespace {

// A published wait. The lock's memory stays valid while it is published: the waiting thread is
// blocked in it, holding it alive, and withdraws under the graph's lock before it returns.
struct Blocked {
  ThreadId thread;
  LockIdentity lock;
};

std::mutex& graph_lock() {
  static auto* lock = new std::mutex();  // never destroyed: threads may block during exit
  return *lock;
}

std::vector<Blocked>& graph() {  // guarded by graph_lock()
  static auto* blocked = new std::vector<Blocked>();
  return *blocked;
}

thread_local std::vector<WaitsForEdge> reported_cycle;

// The cycle through `self` if the graph has one (longest possible: every published thread).
std::vector<WaitsForEdge> cycle_through(ThreadId self, const LockIdentity& lock) {
  const std::vector<Blocked>& blocked = graph();
  std::vector<WaitsForEdge> path{{self, lock.site->kind, lock.address}};
  LockIdentity waits_for = lock;
  while (path.size() <= blocked.size()) {
    const ThreadId owner = waits_for.owner();
    if (owner == self) return path;
    const auto next = std::find_if(blocked.begin(), blocked.end(),
                                   [&](const Blocked& b) { return b.thread == owner; });
    if (owner == kNoThread || next == blocked.end()) return {};
    path.push_back({owner, next->lock.site->kind, next->lock.address});
    waits_for = next->lock;
  }
  return {};  // a cycle that does not pass through this thread: one of its members reports it
}

bool same_cycle(const std::vector<WaitsForEdge>& a, const std::vector<WaitsForEdge>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](auto& x, auto& y) {
           return x.thread == y.thread && x.address == y.address;
         });
}

}  // namespace

bool WaitsForWatch::poll() {
  std::vector<WaitsForEdge> cycle;
  {
    const std::lock_guard<std::mutex> guard(graph_lock());
    if (!published_) {
      graph().push_back({self_, lock_});
      published_ = true;
    }
    cycle = cycle_through(self_, lock_);
  }
  const bool victim =
      !cycle.empty() && std::all_of(cycle.begin(), cycle.end(),
                                    [&](const WaitsForEdge& e) { return e.thread <= self_; });
  if (!victim) {
    last_cycle_.clear();
    return false;
  }
  if (!same_cycle(cycle, last_cycle_)) {
    last_cycle_ = std::move(cycle);
    return false;
  }
  reported_cycle = std::move(cycle);
  return true;
}

WaitsForWatch::~WaitsForWatch() {
  if (!published_) return;
  const std::lock_guard<std::mutex> guard(graph_lock());
  std::vector<Blocked>& blocked = graph();
  const auto mine = std::find_if(blocked.begin(), blocked.end(),
                                 [&](const Blocked& b) { return b.thread == self_; });
  if (mine == blocked.end()) return;
  *mine = blocked.back();
  blocked.pop_back();
}

std::vector<WaitsForEdge> take_deadlock_cycle() {
  return std::exchange(reported_cycle, {});
}

}  // namespace parklock
