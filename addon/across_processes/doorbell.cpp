#include "across_processes/doorbell.h"

#include "across_processes/mechanism.h"

#if defined(PARKLOCK_ACROSS_PROCESSES)
#include "lot/atomic_ref.h"
#include "os/word_wait.h"

namespace parklock::cross_process {

void ring(const shared_region::DoorbellPlace& doorbell, const void* word) noexcept {
  const std::uint32_t number =
      atomic_ref<std::uint32_t>(*doorbell.rings).fetch_add(1, std::memory_order_acq_rel) &
      kRingMask;
  atomic_ref<std::uint64_t>(doorbell.recent[number % shared_region::kRecentRings])
      .store((std::uint64_t{kNoted | number} << 32) | word_index(doorbell, word),
             std::memory_order_release);
  os::wake_all_on_word(doorbell.rings, /*shared=*/true);
}

void announce(const shared_region::DoorbellPlace& doorbell) noexcept {
  atomic_ref<std::uint32_t>(*doorbell.rings)
      .fetch_add(std::uint32_t{1} << kRingBits, std::memory_order_acq_rel);
  os::wake_all_on_word(doorbell.rings, /*shared=*/true);
}

Rung rung_between(const shared_region::DoorbellPlace& doorbell, std::uint32_t from,
                  std::uint32_t to) noexcept {
  Rung rung;
  const std::uint32_t first = from & kRingMask;
  const std::uint32_t rings = (to - first) & kRingMask;
  if (rings > shared_region::kRecentRings) {
    rung.every = true;
    return rung;
  }
  for (std::uint32_t i = 0; i < rings; ++i) {
    const std::uint32_t number = (first + i) & kRingMask;
    const std::uint64_t entry =
        atomic_ref<std::uint64_t>(doorbell.recent[number % shared_region::kRecentRings])
            .load(std::memory_order_acquire);
    if (static_cast<std::uint32_t>(entry >> 32) != (kNoted | number)) {
      rung.every = true;  // not noted yet, or noted over by a later ring
      return rung;
    }
    rung.words[rung.count++] = static_cast<std::uint32_t>(entry);
  }
  return rung;
}

}  // namespace parklock::cross_process

#endif
