#include "shared_words.h"

#include <cmath>

#include "across_processes/shared_region.h"
#include "errors.h"
#include "process_memory.h"

namespace parklock::binding {

std::int32_t* shared_words(Napi::Env env, napi_value value, napi_value index_value,
                           std::size_t word_count) {
  bool is_typed_array = false;
  napi_typedarray_type type = napi_uint8_array;
  std::size_t length = 0;
  void* data = nullptr;
  napi_value buffer = nullptr;
  std::size_t byte_offset = 0;
  bool is_array_buffer = true;
  // Only memory on a SharedArrayBuffer can be waited on by another thread; a plain ArrayBuffer
  // can also be detached or transferred while a waiter is parked on it. The one exception is a
  // shared region's ArrayBuffer (shared_region.h), which is neither detachable nor transferable,
  // and whose mapping each of its buffers keeps; and so is the process's own block
  // (process_memory.h), never freed.
  if (napi_is_typedarray(env, value, &is_typed_array) != napi_ok || !is_typed_array ||
      napi_get_typedarray_info(env, value, &type, &length, &data, &buffer, &byte_offset) !=
          napi_ok ||
      type != napi_int32_array || napi_is_arraybuffer(env, buffer, &is_array_buffer) != napi_ok ||
      (is_array_buffer && (length == 0 || (shared_region::region_at(data) == nullptr &&
                                           !in_process_memory(data, length * 4))))) {
    throw_type_error(env, "ERR_INVALID_ARG_TYPE", "expected an Int32Array on a SharedArrayBuffer");
  }
  const Napi::Value index_js(env, index_value);
  if (!index_js.IsNumber()) {
    throw_type_error(env, "ERR_INVALID_ARG_TYPE", "expected an integer index");
  }
  const double index = index_js.As<Napi::Number>().DoubleValue();
  if (!(index >= 0) || std::floor(index) != index ||
      index + static_cast<double>(word_count) > static_cast<double>(length)) {
    throw_range_error(env, "ERR_OUT_OF_RANGE", "index out of range of the Int32Array");
  }
  std::int32_t* words = static_cast<std::int32_t*>(data) + static_cast<std::size_t>(index);
  check_region_intact(env, words);
  return words;
}

void check_region_intact(Napi::Env env, const void* address) {
  if (!shared_region::any_mapped()) return;
  const shared_region::Region* region = shared_region::region_at(address);
  if (region != nullptr && !shared_region::intact(region)) throw_region_lost(env);
}

void throw_region_lost(Napi::Env env) {
  throw_error(env, "ERR_PARKLOCK_REGION_LOST",
              "The file of this shared memory was truncated or overwritten while mapped: its "
              "locks can no longer be trusted");
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
