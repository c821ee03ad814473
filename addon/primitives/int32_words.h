// What every primitive's layout starts from: `Count` 32-bit words of caller-owned (possibly
// shared) memory, aligned as an int32. The binding exports these constants to JavaScript with the
// primitive's own (new_layout<>).
#pragma once

#include <cstddef>
#include <cstdint>

namespace parklock {

template <std::size_t Count>
struct Int32Words {
  static constexpr std::size_t kWordCount = Count;
  static constexpr std::size_t kBytes = Count * sizeof(std::int32_t);
  static constexpr std::size_t kAlign = alignof(std::int32_t);
};

}  // namespace parklock
