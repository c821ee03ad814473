#include "lot/interrupt.h"

namespace parklock {

namespace {
thread_local const Interrupt* current = nullptr;
}  // namespace

const Interrupt* current_interrupt() noexcept {
  return current;
}

InterruptScope::InterruptScope(const Interrupt* interrupt) noexcept : outer_(current) {
  current = interrupt;
}

InterruptScope::~InterruptScope() {
  current = outer_;
}

}  // namespace parklock
