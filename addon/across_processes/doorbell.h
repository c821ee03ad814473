// A region's doorbell: how a release reaches the other processes' relays where the OS sleeps on
// one word at a time (the doorbell mechanism, mechanism.h). Every process's relay for a region
// sleeps on its doorbell word; a release on a word of the region rings it: counts one more ring,
// notes the word among the latest rings, and wakes every sleeper.
//
// Header fields (shared_region.h):
//   24  4                 the doorbell word: bits 0..15 count the rings, bits 16..31 the
//                         announcements (both wrapping; a carry out of the rings reads as an
//                         announcement)
//   32  8 * kRecentRings  ring n (its 16 bits), in entry n % kRecentRings: ((kNoted | n) << 32) |
//                         the index of the word rung for (its offset in the user area / 4); a
//                         fresh file's zeros are no ring's
//
// An announcement wakes the relays without naming a word: a waiter here told its relay something
// (RelayShard::announce()), and what the relay finds then is in the words, which it compares
// anyway. Were announcements rings, a thousand waiters queueing at once would overflow the
// latest rings of every process, and every relay would wake all its waiters, which queue again.
//
// A relay that last looked after ring `from` and finds the count at `to` learns which words rang
// from the entries in between (rung_between()), so that only their waiters look again. It may
// not tell: more than kRecentRings rang since, or a ringer has counted its ring and not yet
// noted its word (or died in between). Then every word the relay watches in the region is looked
// at again: a waiter woken for nothing sleeps again, while a waiter not woken could sleep through
// its turn.
#pragma once

#include <cstddef>
#include <cstdint>

#include "across_processes/shared_region.h"

namespace parklock::cross_process {

inline constexpr std::uint32_t kRingBits = 16;
inline constexpr std::uint32_t kRingMask = (std::uint32_t{1} << kRingBits) - 1;
inline constexpr std::uint32_t kNoted = std::uint32_t{1} << kRingBits;

// Rings the doorbell of the region holding `word` for it; the caller holds a use of the region.
void ring(const shared_region::DoorbellPlace& doorbell, const void* word) noexcept;

// Wakes every relay asleep on the doorbell, naming no word.
void announce(const shared_region::DoorbellPlace& doorbell) noexcept;

// The rings between two readings of the doorbell word, `from` and then `to`: the word indices
// they name, or `every` when that cannot be told.
struct Rung {
  bool every = false;
  std::size_t count = 0;
  std::uint32_t words[shared_region::kRecentRings] = {};
};
Rung rung_between(const shared_region::DoorbellPlace& doorbell, std::uint32_t from,
                  std::uint32_t to) noexcept;

// The index rung_between() gives for `word` of the doorbell's region.
inline std::uint32_t word_index(const shared_region::DoorbellPlace& doorbell, const void* word) {
  return static_cast<std::uint32_t>(
      (reinterpret_cast<std::uintptr_t>(word) - reinterpret_cast<std::uintptr_t>(doorbell.user)) /
      4);
}

}  // namespace parklock::cross_process
