#include "shared_words.h"

#include <cmath>

#include "errors.h"

namespace parklock::binding {

std::int32_t* shared_words(const Napi::CallbackInfo& info, std::size_t arg,
                           std::size_t word_count) {
  Napi::Env env = info.Env();
  if (!info[arg].IsTypedArray() ||
      info[arg].As<Napi::TypedArray>().TypedArrayType() != napi_int32_array) {
    throw_type_error(env, "ERR_INVALID_ARG_TYPE", "expected an Int32Array");
  }
  auto array = info[arg].As<Napi::Int32Array>();
  if (!info[arg + 1].IsNumber()) {
    throw_type_error(env, "ERR_INVALID_ARG_TYPE", "expected an integer index");
  }
  const double index = info[arg + 1].As<Napi::Number>().DoubleValue();
  if (!(index >= 0) || std::floor(index) != index ||
      index + static_cast<double>(word_count) > static_cast<double>(array.ElementLength())) {
    throw_range_error(env, "ERR_OUT_OF_RANGE", "index out of range of the Int32Array");
  }
  return array.Data() + static_cast<std::size_t>(index);
}

double timeout_ms(const Napi::CallbackInfo& info, std::size_t arg) {
  if (!info[arg].IsNumber()) {
    throw_type_error(info.Env(), "ERR_INVALID_ARG_TYPE", "timeout must be a number");
  }
  const double ms = info[arg].As<Napi::Number>().DoubleValue();
  if (!(ms >= 0)) {
    throw_range_error(info.Env(), "ERR_OUT_OF_RANGE", "timeout must be >= 0");
  }
  return ms;
}

}  // namespace parklock::binding
