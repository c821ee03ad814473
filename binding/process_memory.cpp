#include "process_memory.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>

#include "errors.h"
#include "exports.h"

namespace parklock::binding {

namespace {

std::atomic<unsigned char*> block{nullptr};

// Allocated zeroed on first use: where the allocator maps large blocks lazily, pages that no
// table entry touches cost nothing.
unsigned char* the_block() {
  unsigned char* made = block.load(std::memory_order_acquire);
  if (made != nullptr) return made;
  static std::mutex making;
  const std::lock_guard<std::mutex> lock(making);
  made = block.load(std::memory_order_relaxed);
  if (made == nullptr) {
    made = static_cast<unsigned char*>(std::calloc(kProcessMemoryBytes, 1));
    block.store(made, std::memory_order_release);
  }
  return made;
}

void keep_block(napi_env /*env*/, void* /*data*/, void* /*hint*/) {}

// processMemory() -> an ArrayBuffer over the block. Not a SharedArrayBuffer (Node-API makes none
// over external memory before Node 26): each thread asks for its own buffer over the same bytes,
// and JavaScript's Atomics work on it all the same.
Napi::Value process_memory(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  unsigned char* made = the_block();
  if (made == nullptr)
    throw_error(env, "ERR_PARKLOCK_NO_MEMORY", "The lock table could not be allocated");
  napi_value buffer = nullptr;
  NAPI_THROW_IF_FAILED(env,
                       napi_create_external_arraybuffer(env, made, kProcessMemoryBytes, keep_block,
                                                        nullptr, &buffer),
                       Napi::Value());
  return Napi::Value(env, buffer);
}

const Exports registered([](Napi::Env env, Napi::Object exports) {
  exports.Set("processMemory", Napi::Function::New(env, process_memory, "processMemory"));
  exports.Set("processMemoryBytes", static_cast<double>(kProcessMemoryBytes));
});

}  // namespace

bool in_process_memory(const void* address, std::size_t bytes) noexcept {
  const unsigned char* start = block.load(std::memory_order_acquire);
  if (start == nullptr) return false;
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  const auto begin = reinterpret_cast<std::uintptr_t>(start);
  return at >= begin && bytes <= kProcessMemoryBytes && at - begin <= kProcessMemoryBytes - bytes;
}

}  // namespace parklock::binding
