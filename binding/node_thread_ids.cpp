#include "node_thread_ids.h"

#include <mutex>
#include <unordered_map>

namespace parklock::binding {

namespace {

struct Registry {
  std::mutex lock;
  std::unordered_map<ThreadId, double> node_ids;  // guarded by lock
};

Registry& registry() {
  // Never destroyed: worker environments may report ended owners while statics are destroyed.
  static auto* instance = new Registry();
  return *instance;
}

}  // namespace

void remember_node_thread_id(ThreadId thread, double node_thread_id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> guard(r.lock);
  r.node_ids[thread] = node_thread_id;
}

std::optional<double> node_thread_id_of(ThreadId thread) {
  Registry& r = registry();
  std::lock_guard<std::mutex> guard(r.lock);
  auto found = r.node_ids.find(thread);
  if (found == r.node_ids.end()) return std::nullopt;
  return found->second;
}

}  // namespace parklock::binding
