// The native half of lib/shared_region.js: a region file, opened by JavaScript, mapped here and
// handed back as the memory primitives are placed in.
#include <cmath>
#include <string>

#if defined(_WIN32)
#include "os/windows_api.h"
#else
#include <dlfcn.h>
#endif

#include "across_processes/mechanism.h"
#include "across_processes/shared_region.h"
#include "errors.h"
#include "exports.h"
#include "node_thread_ids.h"
#include "region_identity.h"
#include "shared_words.h"
#include "thread_context.h"

namespace parklock::binding {

namespace {

const char* error_name(shared_region::OpenError error) {
  switch (error) {
    case shared_region::OpenError::kNone:
      break;
    case shared_region::OpenError::kUnsupported:
      return "unsupported";
    case shared_region::OpenError::kSystem:
      return "system";
    case shared_region::OpenError::kNotRegular:
      return "not-regular";
    case shared_region::OpenError::kForeignOwner:
      return "foreign-owner";
    case shared_region::OpenError::kTooSmall:
      return "too-small";
    case shared_region::OpenError::kNotARegion:
      return "not-a-region";
    case shared_region::OpenError::kUnfinished:
      return "unfinished";
    case shared_region::OpenError::kBusy:
      return "busy";
    case shared_region::OpenError::kExists:
      return "exists";
    case shared_region::OpenError::kVersion:
      return "version";
    case shared_region::OpenError::kMechanism:
      return "mechanism";
    case shared_region::OpenError::kTooMany:
      return "too-many";
  }
  return "none";
}

// Node's node_api_create_external_sharedarraybuffer (experimental, Node 26), looked up at run
// time so that the same binary loads on Nodes without it; null there.
using CreateExternalShared = napi_status (*)(napi_env env, void* data, std::size_t byte_length,
                                             void (*finalize)(void* data, void* hint), void* hint,
                                             napi_value* result);
CreateExternalShared external_shared_creator() {
#if defined(_WIN32)
  // Node-API's functions are node.exe's exports (or those of the host that loaded the addon).
  static const auto create = reinterpret_cast<CreateExternalShared>(reinterpret_cast<void*>(
      GetProcAddress(GetModuleHandleW(nullptr), "node_api_create_external_sharedarraybuffer")));
#else
  static const auto create = reinterpret_cast<CreateExternalShared>(
      dlsym(RTLD_DEFAULT, "node_api_create_external_sharedarraybuffer"));
#endif
  return create;
}

// The finalizers of a region's memory: each buffer holds one use of the region, given back when
// the buffer is collected (for a SharedArrayBuffer posted to workers, by the last of them).
void release_mapping(void* /*data*/, void* region) {
  shared_region::release(static_cast<shared_region::Region*>(region));
}
void release_mapping_in(napi_env /*env*/, void* data, void* region) {
  release_mapping(data, region);
}

// The mapping as JavaScript memory: a SharedArrayBuffer where this Node makes one over external
// memory, else an external ArrayBuffer (JavaScript's Atomics work on both). The buffer takes over
// the use `opened` holds; if none can be made, that use is given back.
napi_value region_memory(Napi::Env env, const shared_region::Opened& opened) {
  napi_value buffer = nullptr;
  const auto bytes = static_cast<std::size_t>(opened.size);
  const CreateExternalShared create = external_shared_creator();
  if (create != nullptr &&
      create(env, opened.words, bytes, release_mapping, opened.region, &buffer) == napi_ok) {
    return buffer;
  }
  if (napi_create_external_arraybuffer(env, opened.words, bytes, release_mapping_in, opened.region,
                                       &buffer) != napi_ok) {
    shared_region::release(opened.region);
    throw_error(env, "ERR_PARKLOCK_REGION_SYSTEM", "The mapping could not be made a buffer");
  }
  return buffer;
}

// What opening came to, for lib/shared_region.js: { memory (region_memory()), created }, or
// { error, errno, version } saying why not, which it turns into an Error with the path.
Napi::Value opening_result(Napi::Env env, const shared_region::Opened& opened) {
  Napi::Object result = Napi::Object::New(env);
  if (opened.region == nullptr) {
    result.Set("error", error_name(opened.error));
    result.Set("errno", opened.error_number);
    result.Set("version", static_cast<double>(opened.found_version));
    return result;
  }
  result.Set("memory", Napi::Value(env, region_memory(env, opened)));
  result.Set("created", opened.created);
  return result;
}

double region_size(const Napi::CallbackInfo& info, std::size_t arg, const char* call) {
  const double size = info[arg].As<Napi::Number>().DoubleValue();
  if (!(size >= 0) || std::floor(size) != size ||
      size > static_cast<double>(shared_region::kMaxUserBytes)) {
    throw_range_error(info.Env(), "ERR_OUT_OF_RANGE", call);
  }
  return size;
}

// createRegion(path, mode, size) -> opening_result(); error 'exists' if the path exists.
Napi::Value create_region(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString() || !info[1].IsNumber() || !info[2].IsNumber()) {
    throw_type_error(env, "ERR_INVALID_ARG_TYPE", "createRegion(path, mode, size)");
  }
  const double mode = info[1].As<Napi::Number>().DoubleValue();
  if (!(mode >= 0) || std::floor(mode) != mode || mode > 0777) {
    throw_range_error(env, "ERR_OUT_OF_RANGE", "createRegion(path, mode, size)");
  }
  const double size = region_size(info, 2, "createRegion(path, mode, size)");
  const std::string path = info[0].As<Napi::String>().Utf8Value();
  return opening_result(env, shared_region::create(path.c_str(), static_cast<unsigned>(mode),
                                                   static_cast<std::uint64_t>(size)));
}

// adoptRegion(fd, mayRepair, size) -> opening_result() for the open file `fd`.
Napi::Value adopt_region(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsNumber() || !info[1].IsBoolean() || !info[2].IsNumber()) {
    throw_type_error(env, "ERR_INVALID_ARG_TYPE", "adoptRegion(fd, mayRepair, size)");
  }
  const double fd = info[0].As<Napi::Number>().DoubleValue();
  if (!(fd >= 0) || std::floor(fd) != fd || fd > 2147483647) {
    throw_range_error(env, "ERR_OUT_OF_RANGE", "adoptRegion(fd, mayRepair, size)");
  }
  const double size = region_size(info, 2, "adoptRegion(fd, mayRepair, size)");
  return opening_result(env, shared_region::adopt(static_cast<os::FileHandle>(fd),
                                                  info[1].As<Napi::Boolean>().Value(),
                                                  static_cast<std::uint64_t>(size)));
}

// openRegion(path, mayRepair, size) -> opening_result() for the existing file `path`, opened
// here, never through a symbolic link: how Windows opens one (os::open_existing()), where
// JavaScript's descriptors cannot be handed to the addon. Error 'open' (with ENOENT where nothing
// is at `path`) where the file would not open, as node:fs's open would fail.
Napi::Value open_region(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString() || !info[1].IsBoolean() || !info[2].IsNumber()) {
    throw_type_error(env, "ERR_INVALID_ARG_TYPE", "openRegion(path, mayRepair, size)");
  }
  const double size = region_size(info, 2, "openRegion(path, mayRepair, size)");
  shared_region::Opened opened;
  opened.error = shared_region::OpenError::kUnsupported;
#if defined(PARKLOCK_ACROSS_PROCESSES)
  const std::string path = info[0].As<Napi::String>().Utf8Value();
  opened.error = shared_region::OpenError::kSystem;
  const os::FileHandle file = os::open_existing(path.c_str(), &opened.error_number);
  if (file == os::kNoFile) {
    Napi::Object result = opening_result(env, opened).As<Napi::Object>();
    result.Set("error", "open");
    return result;
  }
  opened = shared_region::adopt(file, info[1].As<Napi::Boolean>().Value(),
                                static_cast<std::uint64_t>(size));
  os::close_file(file);
#endif
  return opening_result(env, opened);
}

// regionsMapped() -> how many regions this process has mapped now (tests, diagnostics).
Napi::Value regions_mapped(const Napi::CallbackInfo& info) {
  return Napi::Number::New(
      info.Env(),
      static_cast<double>(shared_region::detail::mapped_count.load(std::memory_order_relaxed)));
}

// inRegion(int32Array) -> whether its memory lies in a region: a SharedArrayBuffer that
// region_memory() made, in this thread or in another that posted it here.
Napi::Value in_region(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::int32_t* word = shared_words(env, info[0], Napi::Number::New(env, 0), 1);
  return Napi::Boolean::New(env, shared_region::region_at(word) != nullptr);
}

// regionIdentity(int32Array) -> this thread's identity in the region holding the array's
// memory, which JavaScript's fast paths write into lock words there.
Napi::Value region_identity(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::int32_t* word = shared_words(env, info[0], Napi::Number::New(env, 0), 1);
  return Napi::Number::New(env, acting_thread(env, word, ThreadContext::of(env).thread()));
}

// regionHolder(int32Array, identity) -> [pid, Node threadId or null] of a region identity: the
// threadId where it is a live thread of this process (IdentityInfo::here); null once its slot
// has been taken again.
Napi::Value region_holder(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::int32_t* word = shared_words(env, info[0], Napi::Number::New(env, 0), 1);
  if (!info[1].IsNumber()) throw_type_error(env, "ERR_INVALID_ARG_TYPE", "bad identity");
  const auto identity = static_cast<ThreadId>(info[1].As<Napi::Number>().Int32Value());
  const shared_region::IdentityInfo who = shared_region::describe(word, identity);
  if (who.pid == 0) return env.Null();
  const std::optional<double> thread =
      who.here == kNoThread ? std::nullopt : node_thread_id_of(who.here);
  Napi::Array pair = Napi::Array::New(env, 2);
  pair.Set(0u, who.pid);
  pair.Set(1u, thread ? Napi::Value(Napi::Number::New(env, *thread)) : env.Null());
  return pair;
}

const Exports registered([](Napi::Env env, Napi::Object exports) {
  exports.Set("regionsSupported", Napi::Boolean::New(env, shared_region::supported()));
  // How waits cross processes here (across_processes/mechanism.h), for tests and diagnostics.
  exports.Set("crossProcessMechanism", cross_process::uses_doorbell() ? "doorbell" : "futex_waitv");
  exports.Set("regionHeaderBytes", static_cast<double>(shared_region::kHeaderBytes));
  exports.Set("regionVersion", static_cast<double>(shared_region::kVersion));
  exports.Set("regionMaxBytes", static_cast<double>(shared_region::kMaxUserBytes));
  exports.Set("regionMostMapped", static_cast<double>(shared_region::kMostRegions));
  exports.Set("regionRepairWaitMs", static_cast<double>(shared_region::kRepairWait.count()));
  exports.Set("createRegion", Napi::Function::New(env, create_region, "createRegion"));
  exports.Set("adoptRegion", Napi::Function::New(env, adopt_region, "adoptRegion"));
  exports.Set("openRegion", Napi::Function::New(env, open_region, "openRegion"));
  exports.Set("regionsMapped", Napi::Function::New(env, regions_mapped, "regionsMapped"));
  exports.Set("regionIdentity", Napi::Function::New(env, region_identity, "regionIdentity"));
  exports.Set("regionHolder", Napi::Function::New(env, region_holder, "regionHolder"));
  exports.Set("inRegion", Napi::Function::New(env, in_region, "inRegion"));
});

}  // namespace

}  // namespace parklock::binding
