// Locating a primitive's words from the (Int32Array, index) pair JavaScript passes.
//
// The JavaScript layer validates arguments with precise messages before it calls in; these checks
// are the second line, so that no call into the addon can touch memory outside the array.
#pragma once

#include <napi.h>

#include <cstddef>
#include <cstdint>

namespace parklock::binding {

// The address of info[arg] (an Int32Array) at element info[arg + 1], where `word_count` elements
// must fit. Throws TypeError / RangeError otherwise.
std::int32_t* shared_words(const Napi::CallbackInfo& info, std::size_t arg, std::size_t word_count);

// A primitive's layout object for JavaScript, starting with the three entries every primitive has;
// the caller adds the primitive's own constants.
template <typename Words>
Napi::Object new_layout(Napi::Env env) {
  Napi::Object layout = Napi::Object::New(env);
  layout.Set("WORDS", static_cast<double>(Words::kWordCount));
  layout.Set("BYTES", static_cast<double>(Words::kBytes));
  layout.Set("ALIGN", static_cast<double>(Words::kAlign));
  return layout;
}

// info[arg] as a timeout in milliseconds (a non-negative number or Infinity).
double timeout_ms(const Napi::CallbackInfo& info, std::size_t arg);

}  // namespace parklock::binding
