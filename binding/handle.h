// A primitive's words, located once: JavaScript calls handle(int32Array, wordCount) the first time
// an instance needs the addon and passes the handle to every later call, so that a contended call
// unwraps one tagged External instead of validating an (Int32Array, index) pair again.
//
// The handle keeps the Int32Array (and so its SharedArrayBuffer) alive through a strong reference
// that only its finalizer deletes: the address inside stays valid for as long as anything can
// pass the handle in.
#pragma once

#include <napi.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "across_processes/shared_region.h"

namespace parklock::binding {

// The words of the handle info[arg], which must have at least `word_count` of them (a handle made
// for a 1-word primitive is refused where 2 words are needed). Throws a TypeError with code
// ERR_INVALID_ARG_TYPE for anything that is not such a handle.
std::int32_t* words_of(const Napi::CallbackInfo& info, std::size_t arg, std::size_t word_count);

// All the words of the handle info[arg]: where they start and how many the primitive has. Throws
// as words_of() does.
struct HandleWords {
  std::int32_t* words;
  std::size_t count;
};
HandleWords all_words_of(const Napi::CallbackInfo& info, std::size_t arg);

// Whether the words of every handle among the call's arguments still lie in the region file that
// was mapped (shared_region::intact()); words outside every region always do. Each call that
// reaches the addon through a handle checks this as it starts (all_words_of(), which throws
// ERR_PARKLOCK_REGION_LOST), and a wait again as it ends.
bool handles_intact(const Napi::CallbackInfo& info);

// The regions the words of the call's handle arguments lie in, for a Promise wait that touches
// them until it is deleted: at most two, a Condition's and its Mutex's (null where fewer).
struct HandleRegions {
  std::array<shared_region::Region*, 2> regions{};
};
HandleRegions regions_of(const Napi::CallbackInfo& info);

}  // namespace parklock::binding
