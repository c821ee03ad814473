// The identity a thread acts as on a word: its own ThreadId, or in a region other processes
// share, its region identity (addon/across_processes/shared_region.h).
#pragma once

#include <napi.h>

#include "across_processes/shared_region.h"
#include "errors.h"

namespace parklock::binding {

inline ThreadId acting_thread(Napi::Env env, const void* word, ThreadId thread) {
  const ThreadId identity = shared_region::identity_at(word, thread);
  if (identity == kNoThread) {
    throw_error(env, "ERR_PARKLOCK_REGION_FULL",
                "Every identity slot of the shared memory region is taken by a live thread");
  }
  return identity;
}

}  // namespace parklock::binding
