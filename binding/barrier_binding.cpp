// The native half of lib/barrier.js: only the arrival that may complete a generation, so that
// the compare-and-swap and the notify of every waiter happen in one call. Waiting goes through
// the futex entries; other arrivals and withdrawals are single compare-and-swaps in JavaScript.
#include "barrier.h"
#include "errors.h"
#include "exports.h"
#include "handle.h"
#include "shared_words.h"

namespace parklock::binding {

namespace {

// What barrierArrive returns for the party that completed its generation; any other return is
// the generation (0..65535) the caller joined and must wait for.
constexpr double kArrivedLast = -1;

// barrierArrive(handle) -> kArrivedLast or the generation joined.
Napi::Value arrive(const Napi::CallbackInfo& info) {
  BarrierWord barrier(words_of(info, 0, BarrierWord::kWordCount));
  const BarrierWord::Arrival arrival = barrier.arrive();
  switch (arrival.status) {
    case BarrierWord::ArriveStatus::kLast:
      return Napi::Number::New(info.Env(), kArrivedLast);
    case BarrierWord::ArriveStatus::kJoined:
      return Napi::Number::New(info.Env(), static_cast<double>(arrival.generation));
    case BarrierWord::ArriveStatus::kUninitialized:
      throw_error(info.Env(), "ERR_PARKLOCK_UNINITIALIZED",
                  "The barrier's parties word is 0: the memory was never initialized with "
                  "Barrier.init()");
    case BarrierWord::ArriveStatus::kCorrupt:
      break;
  }
  throw_corrupt(info.Env(), "barrier");
}

const Exports registered([](Napi::Env env, Napi::Object exports) {
  exports.Set("barrierArrive", Napi::Function::New(env, arrive, "barrierArrive"));

  Napi::Object layout = new_layout<BarrierWord>(env);
  layout.Set("STATE_INDEX", static_cast<double>(BarrierWord::kStateIndex));
  layout.Set("PARTIES_INDEX", static_cast<double>(BarrierWord::kPartiesIndex));
  layout.Set("GENERATION_SHIFT", BarrierWord::kGenerationShift);
  layout.Set("ARRIVED_MASK", BarrierWord::kArrivedMask);
  layout.Set("MAX_PARTIES", BarrierWord::kMaxParties);
  layout.Set("ARRIVED_LAST", kArrivedLast);
  exports.Set("barrierLayout", layout);
});

}  // namespace

}  // namespace parklock::binding
