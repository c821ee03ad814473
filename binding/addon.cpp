// Module entry: loaded once per environment (the main thread and each worker), each with its own
// ThreadContext; everything else in the addon is process-wide (the parking lot).
#include <napi.h>

#include <cstdint>

#include "errors.h"
#include "exports.h"
#include "lot/parking_lot.h"
#include "lot/wait_step.h"
#include "primitives/futex.h"
#include "process_anchor.h"
#include "shared_words.h"
#include "thread_context.h"

namespace parklock::binding {

namespace {

// init(onSettle, probe, nodeThreadId): installs this thread's context. Called once per
// environment, by lib/copies.js; onSettle(record, settlement) is called when a wait ends.
Napi::Value init(const Napi::CallbackInfo& info) {
  if (!info[0].IsFunction() || !info[1].IsFunction() || !info[2].IsNumber()) {
    throw_type_error(info.Env(), "ERR_INVALID_ARG_TYPE",
                     "init(onSettle, probe, nodeThreadId) takes two functions and a number");
  }
  ThreadContext::install(info.Env(), info[0].As<Napi::Function>(), info[1].As<Napi::Function>(),
                         info[2].As<Napi::Number>().DoubleValue());
  return Napi::Number::New(info.Env(), ThreadContext::of(info.Env()).thread());
}

// endedOwner() -> the Node threadId of the owner that the latest OWNER_DIED settlement of this
// thread reported, or null if it was not a Node thread.
Napi::Value ended_owner(const Napi::CallbackInfo& info) {
  const std::optional<double> node_id = ThreadContext::of(info.Env()).take_ended_owner();
  if (!node_id) return info.Env().Null();
  return Napi::Number::New(info.Env(), *node_id);
}

// cancel(wait) -> the settlement of the wait whose handle a start call returned, if it was still
// queued and has ended now (CANCELLED, or what it had already been given); undefined if it will
// still settle through onSettle, or has.
Napi::Value cancel(const Napi::CallbackInfo& info) {
  return ThreadContext::of(info.Env()).cancel(info.Env(), info[0]);
}

// queuedCount(int32Array, index) -> waiters parked on that word, in any thread: those of the
// primitive that lives there and those of futex waits on it.
Napi::Value queued_count(const Napi::CallbackInfo& info) {
  const std::int32_t* word = shared_words(info, 0, 1);
  const std::size_t queued = parking_lot::queued_count(word) + futex::queued_count(word);
  return Napi::Number::New(info.Env(), static_cast<double>(queued));
}

}  // namespace

Napi::Object module_init(Napi::Env env, Napi::Object exports) {
  if (!claim_process()) {
    throw_error(
        env, "ERR_PARKLOCK_DUPLICATE_ADDON",
        "parklock: a different copy of the parklock addon is already loaded in this process "
        "(two versions of the package?); all copies must resolve to one package, or waiters "
        "of one copy would never be woken by the other");
  }
  exports.Set("init", Napi::Function::New(env, init, "init"));
  exports.Set("cancel", Napi::Function::New(env, cancel, "cancel"));
  exports.Set("endedOwner", Napi::Function::New(env, ended_owner, "endedOwner"));
  exports.Set("queuedCount", Napi::Function::New(env, queued_count, "queuedCount"));

  Napi::Object codes = Napi::Object::New(env);
  codes.Set("ACQUIRED", static_cast<int>(Outcome::kAcquired));
  codes.Set("TIMED_OUT", static_cast<int>(Outcome::kTimedOut));
  codes.Set("CANCELLED", static_cast<int>(Outcome::kCancelled));
  codes.Set("ALREADY_HELD", static_cast<int>(Outcome::kAlreadyHeld));
  codes.Set("CORRUPT", static_cast<int>(Outcome::kCorrupt));
  codes.Set("NOT_EQUAL", static_cast<int>(Outcome::kNotEqual));
  codes.Set("NOT_OWNER", static_cast<int>(Outcome::kNotOwner));
  codes.Set("OWNER_DIED", static_cast<int>(Outcome::kOwnerDied));
  codes.Set("LEADER", static_cast<int>(Outcome::kLeader));
  codes.Set("DEADLOCK", static_cast<int>(Outcome::kDeadlock));
  codes.Set("REGION_LOST", static_cast<int>(Outcome::kRegionLost));
  codes.Set("TOO_MANY_WAITERS", static_cast<int>(Outcome::kTooManyWaiters));
  exports.Set("settled", codes);

  Exports::add_all(env, exports);
  return exports;
}

}  // namespace parklock::binding

static Napi::Object InitParklock(Napi::Env env, Napi::Object exports) {
  return parklock::binding::module_init(env, exports);
}

NODE_API_MODULE(parklock, InitParklock)
