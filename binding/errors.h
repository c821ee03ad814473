// Errors thrown into JavaScript carry a `code`, like Node's own.
#pragma once

#include <napi.h>

#include <string>

namespace parklock::binding {

[[noreturn]] void throw_type_error(Napi::Env env, const char* code, const std::string& message);
[[noreturn]] void throw_range_error(Napi::Env env, const char* code, const std::string& message);
[[noreturn]] void throw_error(Napi::Env env, const char* code, const std::string& message);

// ERR_PARKLOCK_CORRUPT: the shared word of `what` ("mutex", ...) holds a value parklock never
// writes, so some other code overwrote it.
[[noreturn]] void throw_corrupt(Napi::Env env, const char* what);

}  // namespace parklock::binding
