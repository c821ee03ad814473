#include "errors.h"

namespace parklock::binding {

namespace {

template <typename ErrorType>
[[noreturn]] void throw_with_code(Napi::Env env, const char* code, const std::string& message) {
  ErrorType error = ErrorType::New(env, message);
  error.Set("code", Napi::String::New(env, code));
  throw error;
}

}  // namespace

void throw_type_error(Napi::Env env, const char* code, const std::string& message) {
  throw_with_code<Napi::TypeError>(env, code, message);
}

void throw_range_error(Napi::Env env, const char* code, const std::string& message) {
  throw_with_code<Napi::RangeError>(env, code, message);
}

void throw_error(Napi::Env env, const char* code, const std::string& message) {
  throw_with_code<Napi::Error>(env, code, message);
}

void throw_corrupt(Napi::Env env, const char* what) {
  throw_error(env, "ERR_PARKLOCK_CORRUPT",
              std::string("The ") + what +
                  " word holds a value parklock never writes; the memory was overwritten by other "
                  "code");
}

}  // namespace parklock::binding
