#include "thread_id.h"

#include <atomic>

namespace parklock {

namespace {
std::atomic<ThreadId> next_thread_id{1};
}

ThreadId current_thread_id() noexcept {
  thread_local const ThreadId id = next_thread_id.fetch_add(1, std::memory_order_relaxed);
  return id;
}

}  // namespace parklock
