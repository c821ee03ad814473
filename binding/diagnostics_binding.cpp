// The native half of lib/diagnostics.js and lib/inspect.js: who waits for what, who holds it, and
// the cycle a deadlock report is about. Addresses reach JavaScript as hexadecimal strings: they
// identify a primitive across threads (every thread maps a SharedArrayBuffer at the same address)
// and are compared, never dereferenced, there.
#include <napi.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "across_processes/shared_region.h"
#include "errors.h"
#include "exports.h"
#include "handle.h"
#include "lot/parking_lot.h"
#include "lot/waits_for.h"
#include "node_thread_ids.h"
#include "primitives/futex.h"

namespace parklock::binding {

namespace {

std::string hex(const void* address) {
  char text[2 + 2 * sizeof(std::uintptr_t) + 1];
  std::snprintf(text, sizeof text, "0x%llx",
                static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(address)));
  return text;
}

// A thread as JavaScript names it: its Node threadId, or null for a thread that is not a Node
// thread (or no thread at all).
Napi::Value node_thread(Napi::Env env, ThreadId thread) {
  const std::optional<double> id = thread == kNoThread ? std::nullopt : node_thread_id_of(thread);
  return id ? Napi::Value(Napi::Number::New(env, *id)) : env.Null();
}

// A thread as the word at `address` names it: in sharedMemory(), a region identity
// (shared_region.h), which is this process's own thread or another process's; `pid` is 0 outside
// regions.
struct Named {
  ThreadId here = kNoThread;
  std::int32_t pid = 0;
};
Named named(const void* address, ThreadId thread) {
  if (!shared_region::is_region_identity(thread)) return {thread, 0};
  const shared_region::IdentityInfo who = shared_region::describe(address, thread);
  return {who.here, who.pid};
}

// deadlockCycle() -> [{ threadId, kind, address }, ...]: the cycle of this thread's latest
// DEADLOCK settlement, starting with this thread; each entry waits for the lock at `address`,
// which the next entry's thread holds (the last one's is held by the first). Taken: a second call
// returns [].
Napi::Value deadlock_cycle(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::vector<WaitsForEdge> cycle = take_deadlock_cycle();
  Napi::Array steps = Napi::Array::New(env, cycle.size());
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    Napi::Object step = Napi::Object::New(env);
    step.Set("threadId", node_thread(env, cycle[i].thread));
    step.Set("kind", cycle[i].kind);
    step.Set("address", hex(cycle[i].address));
    steps[i] = step;
  }
  return steps;
}

// snapshot() -> every waiter queued in the process now (parking_lot::snapshot):
// [{ kind, address, holder, threadId, blocking, waitedMs, request }, ...], and for a word in
// sharedMemory() `holderProcess`: the holder's pid (null: none, or no longer known).
Napi::Value snapshot(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::vector<parking_lot::QueuedWaiter> waiters = parking_lot::snapshot();
  const Clock::time_point now = Clock::now();
  Napi::Array list = Napi::Array::New(env, waiters.size());
  for (std::size_t i = 0; i < waiters.size(); ++i) {
    const parking_lot::QueuedWaiter& w = waiters[i];
    Napi::Object entry = Napi::Object::New(env);
    entry.Set("kind", w.site != nullptr ? w.site->kind : "unknown");
    entry.Set("address", hex(w.address));
    const Named holder = named(w.address, w.holder);
    entry.Set("holder", node_thread(env, holder.here));
    if (shared_region::region_at(w.address) != nullptr) {
      entry.Set("holderProcess",
                holder.pid != 0 ? Napi::Value(Napi::Number::New(env, holder.pid)) : env.Null());
    }
    entry.Set("threadId", node_thread(env, named(w.address, w.thread).here));
    entry.Set("blocking", w.blocking);
    entry.Set("waitedMs", std::chrono::duration<double, std::milli>(now - w.since).count());
    entry.Set("request", static_cast<double>(w.request));
    list[i] = entry;
  }
  return list;
}

// addressOf(handle) -> the address of the handle's first word, as snapshot() reports it.
Napi::Value address_of(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), hex(words_of(info, 0, 1)));
}

// waiting(handle) -> how many waiters are queued on the primitive at the handle now, in any thread:
// in every queue keyed by one of its words (an RWLock's upgrader waits on its owner word), and
// futex waits on them.
Napi::Value waiting(const Napi::CallbackInfo& info) {
  const HandleWords handle = all_words_of(info, 0);
  std::size_t count = 0;
  for (std::size_t i = 0; i < handle.count; ++i) {
    count += parking_lot::queued_count(handle.words + i) + futex::queued_count(handle.words + i);
  }
  return Napi::Number::New(info.Env(), static_cast<double>(count));
}

// nodeThreadIdOf(threadId) -> the Node threadId of a parklock thread id read from a lock's word,
// or null.
Napi::Value node_thread_id(const Napi::CallbackInfo& info) {
  if (!info[0].IsNumber()) throw_type_error(info.Env(), "ERR_INVALID_ARG_TYPE", "bad thread id");
  const double id = info[0].As<Napi::Number>().DoubleValue();
  if (!(id > 0 && id < 2147483648.0) || static_cast<ThreadId>(id) != id) return info.Env().Null();
  return node_thread(info.Env(), static_cast<ThreadId>(id));
}

const Exports registered([](Napi::Env env, Napi::Object exports) {
  exports.Set("deadlockCycle", Napi::Function::New(env, deadlock_cycle, "deadlockCycle"));
  exports.Set("snapshot", Napi::Function::New(env, snapshot, "snapshot"));
  exports.Set("addressOf", Napi::Function::New(env, address_of, "addressOf"));
  exports.Set("waiting", Napi::Function::New(env, waiting, "waiting"));
  exports.Set("nodeThreadIdOf", Napi::Function::New(env, node_thread_id, "nodeThreadIdOf"));
});

}  // namespace

}  // namespace parklock::binding
