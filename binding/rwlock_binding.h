#pragma once

#include <napi.h>

namespace parklock::binding {

void export_rwlock(Napi::Env env, Napi::Object exports);

}  // namespace parklock::binding
