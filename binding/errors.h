// Errors thrown into JavaScript carry a `code`, like Node's own.
#pragma once

#include <napi.h>

#include <string>

namespace parklock::binding {

[[noreturn]] void throw_type_error(Napi::Env env, const char* code, const std::string& message);
[[noreturn]] void throw_range_error(Napi::Env env, const char* code, const std::string& message);
[[noreturn]] void throw_error(Napi::Env env, const char* code, const std::string& message);

}  // namespace parklock::binding
