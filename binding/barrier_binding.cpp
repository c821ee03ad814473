// The native half of lib/barrier.js: arriving and waiting, so that the arrival that completes a
// generation moves the barrier on and notifies every waiter in one call, and a wait that gives up
// withdraws its arrival exactly when its generation has not completed (addon/primitives/barrier.h).
#include "exports.h"
#include "handle.h"
#include "primitives/barrier.h"
#include "wait_calls.h"

namespace parklock::binding {

namespace {

// barrierWait(handle, timeoutMs) -> LEADER | ACQUIRED (passed) | TIMED_OUT (withdrawn) | CORRUPT,
// arriving and blocking this thread; barrierWaitAsync(handle, record) -> LEADER, CORRUPT, or the
// queued wait's handle.
struct Wait {
  using Step = BarrierWord::ArriveStep;
  static constexpr std::size_t kLastArg = 1;
  // The handle, which the pending wait's record holds through the Barrier, keeps the words valid.
  static auto arguments(const Napi::CallbackInfo& info, ThreadId /*self*/) {
    return std::make_tuple(BarrierWord(words_of(info, 0, BarrierWord::kWordCount)));
  }
};

const Exports registered([](Napi::Env env, Napi::Object exports) {
  exports.Set("barrierWait", Napi::Function::New(env, blocking_wait<Wait>, "barrierWait"));
  exports.Set("barrierWaitAsync", Napi::Function::New(env, promise_wait<Wait>, "barrierWaitAsync"));

  const LayoutConstant own[] = {
      {"STATE_INDEX", BarrierWord::kStateIndex},
      {"PARTIES_INDEX", BarrierWord::kPartiesIndex},
      {"GENERATION_SHIFT", BarrierWord::kGenerationShift},
      {"ARRIVED_MASK", BarrierWord::kArrivedMask},
      {"MAX_PARTIES", BarrierWord::kMaxParties},
  };
  exports.Set("barrierLayout", new_layout<BarrierWord>(env, own));
});

}  // namespace

}  // namespace parklock::binding
