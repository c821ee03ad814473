// The process anchor on Windows: a pointer-sized named mapping, "Local\parklock-anchor-v1-<pid>",
// whose slot the first copy fills with an address of its own. The name is per process because
// Local\ names are shared by a whole session; the mapping ends with the process (no handle to it
// is inheritable, and it is never closed before then).
#if defined(_WIN32)

#include <cwchar>

#include "os/windows_api.h"
#include "process_anchor.h"

namespace {

// Its address identifies this copy.
const char this_copy = 0;

void pin() noexcept {
  HMODULE self = nullptr;
  GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_PIN | GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS,
                     reinterpret_cast<LPCWSTR>(&this_copy), &self);
}

}  // namespace

namespace parklock::binding {

bool claim_this_copy() noexcept {
  pin();
  wchar_t name[64];
  std::swprintf(name, sizeof(name) / sizeof(name[0]), L"Local\\parklock-anchor-v1-%lu",
                static_cast<unsigned long>(GetCurrentProcessId()));
  HANDLE mapping =
      CreateFileMappingW(INVALID_HANDLE_VALUE, nullptr, PAGE_READWRITE, 0, sizeof(void*), name);
  if (mapping == nullptr) return true;
  void* view = MapViewOfFile(mapping, FILE_MAP_ALL_ACCESS, 0, 0, sizeof(void*));
  if (view == nullptr) return true;
  // A new mapping reads zero: the first exchange decides, whichever copy created the mapping.
  void* first = InterlockedCompareExchangePointer(static_cast<void* volatile*>(view),
                                                  const_cast<char*>(&this_copy), nullptr);
  return first == nullptr || first == &this_copy;
}

}  // namespace parklock::binding

#endif
