#include "exports.h"

namespace parklock::binding {

namespace {

// A function-local static, not a global: registrations in other files may run first.
Exports*& first() {
  static Exports* head = nullptr;
  return head;
}

}  // namespace

Exports::Exports(Add add) : add_(add), next_(first()) {
  first() = this;
}

void Exports::add_all(Napi::Env env, Napi::Object exports) {
  for (const Exports* entry = first(); entry != nullptr; entry = entry->next_) {
    entry->add_(env, exports);
  }
}

}  // namespace parklock::binding
