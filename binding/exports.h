// Each binding file registers what it exports by defining one `Exports` at namespace scope;
// module_init (addon.cpp) walks the list, so adding a primitive touches no other file.
#pragma once

#include <napi.h>

namespace parklock::binding {

class Exports {
 public:
  using Add = void (*)(Napi::Env env, Napi::Object exports);

  // Runs during static initialisation, before any environment can load the module.
  explicit Exports(Add add);

  // Adds every registered export to `exports`.
  static void add_all(Napi::Env env, Napi::Object exports);

 private:
  Add add_;
  Exports* next_;
};

}  // namespace parklock::binding
