// The native half of lib/barrier.js: arriving and waiting, so that the arrival that completes a
// generation moves the barrier on and notifies every waiter in one call, and a wait that gives up
// withdraws its arrival exactly when its generation has not completed (addon/barrier.h).
#include "barrier.h"
#include "exports.h"
#include "futex.h"
#include "handle.h"
#include "wait_calls.h"

namespace parklock::binding {

namespace {

// barrierWait(handle, timeoutMs) -> LEADER | ACQUIRED (passed) | TIMED_OUT (withdrawn) | CORRUPT;
// arrives and blocks.
struct Wait {
  static constexpr std::size_t kTimeoutArg = 1;
  Wait(const Napi::CallbackInfo& info, ThreadId)
      : barrier(words_of(info, 0, BarrierWord::kWordCount)) {}
  BarrierWord::Outcome run(BlockingWait& wait) { return barrier.arrive_and_wait(wait.deadline); }
  BarrierWord barrier;
};

// barrierWaitAsync(handle, record) -> LEADER, CORRUPT, or the queued wait's handle: arrives, then
// BarrierWord::wait_for_generation's loop, one futex wait per step; a cancel withdraws the
// arrival unless the generation has completed (then the wait has passed).
class WaitAsync final : public WaitStep {
 public:
  static constexpr std::size_t kRecordArg = 1;
  WaitAsync(const Napi::CallbackInfo& info, ThreadId)
      : words_(words_of(info, 0, BarrierWord::kWordCount)) {}

  Settlement start(Waiter& waiter) override {
    const BarrierWord::Arrival arrival = BarrierWord(words_).arrive();
    switch (arrival.status) {
      case BarrierWord::ArriveStatus::kLast:
        return settled::kLeader;
      case BarrierWord::ArriveStatus::kJoined:
        generation_ = arrival.generation;
        return step(waiter);
      case BarrierWord::ArriveStatus::kUninitialized:
      case BarrierWord::ArriveStatus::kCorrupt:
        break;
    }
    return settled::kCorrupt;
  }

  Settlement resume(Waiter& waiter, WakeToken) override { return step(waiter); }

  // A cancel that lost the race with a wake-up is still a cancel, unless the wait is over.
  Settlement resume_cancelled(Waiter& waiter, WakeToken) override { return on_cancelled(waiter); }

  Settlement on_cancelled(Waiter&) override {
    return BarrierWord(words_).leave(generation_) ? settled::kCancelled : settled::kAcquired;
  }

  // The notification may have been meant for one waiter (futex.notify): it goes to the next. The
  // arrival stands, as for a thread terminated while blocked in wait().
  void abandon(Waiter&, WakeToken) noexcept override {
    futex::notify(BarrierWord(words_).address(), 1);
  }

 private:
  Settlement step(Waiter& waiter) {
    BarrierWord barrier(words_);
    for (;;) {
      const std::int32_t state = barrier.state_value();
      if (BarrierWord::generation_of(state) != generation_) return settled::kAcquired;
      // Queued only while the word still holds `state`: the leader, which notifies after its
      // compare-and-swap, finds it queued or it finds the next generation.
      if (futex::enqueue_if_equal(barrier.address(), state, waiter, &BarrierWord::kWaitSite))
        return settled::kPending;
    }
  }

  // Kept valid by the handle, which the pending wait's record holds through the Barrier.
  std::int32_t* const words_;
  BarrierWord::Generation generation_ = 0;
};

const Exports registered([](Napi::Env env, Napi::Object exports) {
  exports.Set("barrierWait", Napi::Function::New(env, blocking_call<Wait>, "barrierWait"));
  exports.Set("barrierWaitAsync",
              Napi::Function::New(env, start_async<WaitAsync>, "barrierWaitAsync"));

  Napi::Object layout = new_layout<BarrierWord>(env);
  layout.Set("STATE_INDEX", static_cast<double>(BarrierWord::kStateIndex));
  layout.Set("PARTIES_INDEX", static_cast<double>(BarrierWord::kPartiesIndex));
  layout.Set("GENERATION_SHIFT", BarrierWord::kGenerationShift);
  layout.Set("ARRIVED_MASK", BarrierWord::kArrivedMask);
  layout.Set("MAX_PARTIES", BarrierWord::kMaxParties);
  exports.Set("barrierLayout", layout);
});

}  // namespace

}  // namespace parklock::binding
