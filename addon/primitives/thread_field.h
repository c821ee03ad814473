// A 32-bit word that names a thread above `Shift` bits of state (the mutex's owner, the Once's
// runner), so that taking the word and recording who took it is one compare-and-swap. `State` is
// the enum of those bits.
#pragma once

#include <cstdint>

#include "lot/thread_id.h"

namespace parklock {

template <typename State, int Shift>
struct ThreadField {
  static constexpr int kShift = Shift;
  static constexpr std::int32_t kStateMask = (1 << Shift) - 1;
  // ThreadIds at or above this do not fit in the field.
  static constexpr ThreadId kLimit = ThreadId{1} << (31 - Shift);

  static constexpr std::int32_t pack(ThreadId thread, State state) noexcept {
    return static_cast<std::int32_t>(thread << Shift) | static_cast<std::int32_t>(state);
  }
  static constexpr State state_of(std::int32_t word) noexcept {
    return static_cast<State>(word & kStateMask);
  }
  static constexpr ThreadId thread_of(std::int32_t word) noexcept {
    return static_cast<ThreadId>(static_cast<std::uint32_t>(word) >> Shift);
  }
};

}  // namespace parklock
