// wakeStats() -> { woken, futile, handedOff }: how the calling thread's blocked mutex waits have
// fared after their wake-ups since the thread started (addon/primitives/wake_stats.h). For the
// benchmarks, which count futile wake-ups per round next to the times; not part of the package's
// API.
#include <napi.h>

#include "exports.h"
#include "primitives/wake_stats.h"

namespace parklock::binding {
namespace {

Napi::Value wake_stats_of_this_thread(const Napi::CallbackInfo& info) {
  const wake_stats::Counts counts = wake_stats::snapshot();
  Napi::Object result = Napi::Object::New(info.Env());
  result.Set("woken", static_cast<double>(counts.woken));
  result.Set("futile", static_cast<double>(counts.futile));
  result.Set("handedOff", static_cast<double>(counts.handed_off));
  return result;
}

const Exports registered([](Napi::Env env, Napi::Object exports) {
  exports.Set("wakeStats", Napi::Function::New(env, wake_stats_of_this_thread, "wakeStats"));
});

}  // namespace
}  // namespace parklock::binding
