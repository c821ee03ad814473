// The native half of lib/once.js: only the contended paths. JavaScript runs the uncontended begin
// and finish itself, on the same word, with Atomics.
#include "errors.h"
#include "exports.h"
#include "handle.h"
#include "primitives/once.h"
#include "region_identity.h"
#include "wait_calls.h"

namespace parklock::binding {

namespace {

// onceBeginSlow(handle, timeoutMs) -> settlement, blocking this thread;
// onceBeginAsync(handle, record) -> ACQUIRED (done), LEADER (run it), OWNER_DIED (run it, after a
// runner that ended), CORRUPT, or the queued wait's handle.
struct Begin {
  using Step = OnceWord::BeginStep;
  static constexpr std::size_t kLastArg = 1;
  // The handle, which the pending wait's record holds through the Once, keeps the word valid.
  static auto arguments(const Napi::CallbackInfo& info, ThreadId self) {
    const OnceWord once(words_of(info, 0, OnceWord::kWordCount));
    return std::make_tuple(once, acting_thread(info.Env(), once.address(), self));
  }
};

// onceFinishSlow(handle, success) -> true, or false if this thread does not run the initializer;
// throws if the word is corrupt. JavaScript comes here when its fast-path CAS failed.
Napi::Value finish_slow(const Napi::CallbackInfo& info) {
  OnceWord once(words_of(info, 0, OnceWord::kWordCount));
  const bool success = info[1].ToBoolean().Value();
  const ThreadId self =
      acting_thread(info.Env(), once.address(), ThreadContext::of(info.Env()).thread());
  switch (once.finish(self, success)) {
    case OnceWord::FinishStatus::kFinished:
      return Napi::Boolean::New(info.Env(), true);
    case OnceWord::FinishStatus::kNotRunner:
      return Napi::Boolean::New(info.Env(), false);
    case OnceWord::FinishStatus::kCorrupt:
      break;
  }
  throw_corrupt(info.Env(), "once");
}

const Exports registered([](Napi::Env env, Napi::Object exports) {
  exports.Set("onceBeginSlow", Napi::Function::New(env, blocking_wait<Begin>, "onceBeginSlow"));
  exports.Set("onceBeginAsync", Napi::Function::New(env, promise_wait<Begin>, "onceBeginAsync"));
  exports.Set("onceFinishSlow", Napi::Function::New(env, finish_slow, "onceFinishSlow"));

  const LayoutConstant own[] = {
      {"NOT_DONE", OnceWord::kNotDone},     {"DONE", OnceWord::kDone},
      {"RUNNING", OnceWord::kRunning},      {"RUNNING_PARKED", OnceWord::kRunningParked},
      {"STATE_MASK", OnceWord::kStateMask}, {"RUNNER_SHIFT", OnceWord::kRunnerShift},
  };
  exports.Set("onceLayout", new_layout<OnceWord>(env, own));
});

}  // namespace

}  // namespace parklock::binding
