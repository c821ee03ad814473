#include "handle.h"

#include "across_processes/shared_region.h"
#include "errors.h"
#include "exports.h"
#include "shared_words.h"

namespace parklock::binding {

namespace {

// Marks Externals made by handle(): any other External (another addon's, or a wait record) is
// refused rather than read as one.
constexpr napi_type_tag kHandleTag = {0x6c8e3f0a2b9d4c51, 0xa3f7d26e915b08c4};

// More words than any primitive has; bounds the count before it is converted.
constexpr double kMostWords = 16;

struct Handle {
  std::int32_t* words;
  std::size_t word_count;
  napi_ref array;                 // strong: the memory behind `words`, and so the use of its region
  shared_region::Region* region;  // where the words lie in one, else null
};

void finalize(napi_env env, void* data, void* /*hint*/) {
  auto* handle = static_cast<Handle*>(data);
  napi_delete_reference(env, handle->array);
  delete handle;
}

// handle(int32Array, wordCount) -> the handle of the first wordCount elements of int32Array, which
// must be an Int32Array on a SharedArrayBuffer.
Napi::Value make_handle(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[1].IsNumber()) throw_type_error(env, "ERR_INVALID_ARG_TYPE", "bad word count");
  const double count = info[1].As<Napi::Number>().DoubleValue();
  if (!(count >= 1 && count <= kMostWords) || static_cast<std::size_t>(count) != count) {
    throw_range_error(env, "ERR_OUT_OF_RANGE", "bad word count");
  }
  const auto word_count = static_cast<std::size_t>(count);
  std::int32_t* words = shared_words(env, info[0], Napi::Number::New(env, 0), word_count);
  napi_ref array = nullptr;
  NAPI_THROW_IF_FAILED(env, napi_create_reference(env, info[0], 1, &array), Napi::Value());
  auto* handle =
      new Handle{words, word_count, array,
                 shared_region::any_mapped() ? shared_region::region_at(words) : nullptr};
  napi_value external = nullptr;
  if (napi_create_external(env, handle, finalize, nullptr, &external) != napi_ok) {
    napi_delete_reference(env, array);
    delete handle;
    throw Napi::Error::New(env);
  }
  NAPI_THROW_IF_FAILED(env, napi_type_tag_object(env, external, &kHandleTag), Napi::Value());
  return Napi::Value(env, external);
}

const Exports registered([](Napi::Env env, Napi::Object exports) {
  exports.Set("handle", Napi::Function::New(env, make_handle, "handle"));
});

}  // namespace

std::int32_t* words_of(const Napi::CallbackInfo& info, std::size_t arg, std::size_t word_count) {
  const HandleWords handle = all_words_of(info, arg);
  if (handle.count < word_count) {
    throw_type_error(info.Env(), "ERR_INVALID_ARG_TYPE",
                     "expected a handle of the primitive's words (from handle())");
  }
  return handle.words;
}

namespace {

// The handle `value`, or null (with no exception left pending) if it is not one.
const Handle* handle_in(napi_env env, napi_value value) {
  bool tagged = false;
  void* data = nullptr;
  // Only objects can carry a type tag; the check itself refuses every other value.
  if (napi_check_object_type_tag(env, value, &kHandleTag, &tagged) != napi_ok || !tagged ||
      napi_get_value_external(env, value, &data) != napi_ok) {
    // A failed check may leave an exception pending (a non-object); ours replaces it.
    bool pending = false;
    if (napi_is_exception_pending(env, &pending) == napi_ok && pending) {
      napi_value ignored;
      napi_get_and_clear_last_exception(env, &ignored);
    }
    return nullptr;
  }
  return static_cast<const Handle*>(data);
}

bool intact(const Handle& handle) {
  return handle.region == nullptr || shared_region::intact(handle.region);
}

}  // namespace

HandleWords all_words_of(const Napi::CallbackInfo& info, std::size_t arg) {
  const Handle* handle = handle_in(info.Env(), info[arg]);
  if (handle == nullptr) {
    throw_type_error(info.Env(), "ERR_INVALID_ARG_TYPE",
                     "expected a handle of the primitive's words (from handle())");
  }
  if (!intact(*handle)) throw_region_lost(info.Env());
  return {handle->words, handle->word_count};
}

HandleRegions regions_of(const Napi::CallbackInfo& info) {
  HandleRegions found;
  std::size_t count = 0;
  for (std::size_t arg = 0; arg < info.Length(); ++arg) {
    if (!info[arg].IsExternal()) continue;
    const Handle* handle = handle_in(info.Env(), info[arg]);
    if (handle == nullptr || handle->region == nullptr) continue;
    if (count == 1 && found.regions[0] == handle->region) continue;
    if (count < found.regions.size()) found.regions[count++] = handle->region;
  }
  return found;
}

bool handles_intact(const Napi::CallbackInfo& info) {
  for (std::size_t arg = 0; arg < info.Length(); ++arg) {
    if (!info[arg].IsExternal()) continue;
    const Handle* handle = handle_in(info.Env(), info[arg]);
    if (handle != nullptr && !intact(*handle)) return false;
  }
  return true;
}

}  // namespace parklock::binding
