// Locating words from an (Int32Array, index) pair, for the calls that name a word per call
// (futex, queuedCount) and for handle(), which does it once per primitive instance.
//
// The JavaScript layer validates arguments with precise messages before it calls in; these checks
// are the second line, so that no call into the addon can touch memory outside the array.
#pragma once

#include <napi.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace parklock::binding {

// The address of `array` (an Int32Array on a SharedArrayBuffer) at element `index`, where
// `word_count` elements must fit. Throws TypeError / RangeError otherwise.
std::int32_t* shared_words(Napi::Env env, napi_value array, napi_value index,
                           std::size_t word_count);
// Throws ERR_PARKLOCK_REGION_LOST if `address` lies in a region whose file was truncated or
// overwritten while mapped (shared_region::intact()).
void check_region_intact(Napi::Env env, const void* address);
[[noreturn]] void throw_region_lost(Napi::Env env);

// The same for info[arg] at element info[arg + 1].
inline std::int32_t* shared_words(const Napi::CallbackInfo& info, std::size_t arg,
                                  std::size_t word_count) {
  return shared_words(info.Env(), info[arg], info[arg + 1], word_count);
}

// One constant of a primitive's layout, as JavaScript reads it: a number.
struct LayoutConstant {
  const char* name;
  double value;
};

// A primitive's layout object for JavaScript: the three entries every primitive has, then the
// primitive's own constants.
template <typename Words>
Napi::Object new_layout(Napi::Env env, std::span<const LayoutConstant> own) {
  Napi::Object layout = Napi::Object::New(env);
  layout.Set("WORDS", static_cast<double>(Words::kWordCount));
  layout.Set("BYTES", static_cast<double>(Words::kBytes));
  layout.Set("ALIGN", static_cast<double>(Words::kAlign));
  for (const LayoutConstant& constant : own) layout.Set(constant.name, constant.value);
  return layout;
}

// info[arg] as a timeout in milliseconds (a non-negative number or Infinity).
double timeout_ms(const Napi::CallbackInfo& info, std::size_t arg);

}  // namespace parklock::binding
