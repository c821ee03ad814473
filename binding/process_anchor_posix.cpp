// The process anchor on Linux and macOS: the exported symbol parklock_process_anchor_v1, whose
// value names the copy it belongs to. Node loads addons RTLD_LOCAL, where dlsym(RTLD_DEFAULT)
// cannot see them; claiming re-opens this library RTLD_NOLOAD | RTLD_GLOBAL | RTLD_NODELETE, which
// adds it to the global lookup scope after every copy that did so before it (so every copy finds
// the first one's anchor) and pins it.
#if !defined(_WIN32)

#include <dlfcn.h>

#include "process_anchor.h"

namespace {

// Its address identifies this copy. Hidden, so that no other copy's symbol can stand in for it.
const char this_copy = 0;

}  // namespace

// Compared through its value, not its address: this copy's own references to an exported symbol
// may bind to another copy's definition, once that copy is in the global scope.
extern "C" __attribute__((visibility("default"), used))
const void* const parklock_process_anchor_v1 = &this_copy;

namespace parklock::binding {

bool claim_this_copy() noexcept {
  Dl_info self{};
  if (dladdr(&this_copy, &self) == 0 || self.dli_fname == nullptr) return true;
  // Never closed: the handle is the pin.
  if (dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL | RTLD_NODELETE) == nullptr) {
    return true;
  }
  const void* anchor = dlsym(RTLD_DEFAULT, "parklock_process_anchor_v1");
  if (anchor == nullptr) return true;
  return *static_cast<const void* const*>(anchor) == &this_copy;
}

}  // namespace parklock::binding

#endif
