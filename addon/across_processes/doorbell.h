// A region's doorbell: how a release reaches the other processes' relays where the OS sleeps on
// one word at a time, or on none that other processes map (the doorbell mechanism, mechanism.h).
// Every process's relay for a region is a sleeper of its doorbell; a release on a word of the
// region rings it: counts one more ring, notes the word among the latest rings, and wakes every
// sleeper asleep.
//
// Header fields (shared_region.h):
//   24  4                 the doorbell word: bits 0..15 count the rings, bits 16..31 the
//                         announcements (both wrapping; a carry out of the rings reads as an
//                         announcement)
//   32  8 * kRecentRings  ring n (its 16 bits), in entry n % kRecentRings: ((kNoted | n) << 32) |
//                         the index of the word rung for (its offset in the user area / 4); a
//                         fresh file's zeros are no ring's
//   kSleepersOffset       the sleepers, kSleeperEntries entries of kSleeperBytes. Entry 0's first
//                         word counts the entries ever taken, from 1; entry i > 0 is
//                           0   8  key: the sleeper's pid << 32 | a number its process never gave
//                                  another sleeper; 0 free, kClaimingSleeper while being taken
//                           8   8  its process's start (os/process_start.h)
//                           16  4  signal (os/sleeper_event.h): awake, signaled, or asleep
//                           20  12 zeros
//
// Sleepers. A relay takes an entry in the region's table as it first sleeps there and gives it
// up as it leaves the region; an entry whose process has ended is taken again. A sleeper makes
// its signal "awake" before it compares the doorbell word with what it saw, and "asleep" (from
// awake only) before it sleeps; a ringer counts its ring first, then makes every entry's signal
// "signaled" and wakes those it finds asleep. Either the sleeper's comparison sees the ring, or
// the ringer sees the sleeper's entry and signal, so no ring is slept through; and a ringer makes
// a system call only for a sleeper asleep, not for every process that maps the file. Where the
// OS sleeps on a word that other processes map, the sleeper sleeps on its signal word; elsewhere
// (Windows) on an event named after its key (os/sleeper_event.h). A table full of live sleepers
// leaves a newcomer polling its doorbell every millisecond, and asking for an entry again every
// kJoinAgainAfter. A process killed between claiming an entry and writing its key there leaves
// that entry taken for good.
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

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "across_processes/shared_region.h"
#include "os/sleeper_event.h"

namespace parklock::cross_process {

inline constexpr std::uint32_t kRingBits = 16;
inline constexpr std::uint32_t kRingMask = (std::uint32_t{1} << kRingBits) - 1;
inline constexpr std::uint32_t kNoted = std::uint32_t{1} << kRingBits;

// Rings the doorbell of the region holding `word` for it; the caller holds a use of the region.
void ring(const shared_region::DoorbellPlace& doorbell, const void* word) noexcept;

// Wakes every relay asleep on the doorbell, naming no word.
void announce(const shared_region::DoorbellPlace& doorbell) noexcept;

inline constexpr std::uint64_t kClaimingSleeper = 1;  // pid 0: no process's key

// A relay thread's place among a doorbell's sleepers: one region's at a time.
class DoorbellSleeper {
 public:
  DoorbellSleeper() = default;
  DoorbellSleeper(const DoorbellSleeper&) = delete;
  DoorbellSleeper& operator=(const DoorbellSleeper&) = delete;

  // Sleeps while the doorbell word reads `seen`, until a ring or an announcement, `timeout`, or
  // for no reason; first takes an entry among the doorbell's sleepers if it has none there. The
  // caller holds a use of the doorbell's region.
  void sleep(const shared_region::DoorbellPlace& doorbell, std::uint32_t seen,
             std::chrono::nanoseconds timeout) noexcept;
  // Gives its entry up, while the caller still holds a use of its region.
  void leave() noexcept;

 private:
  bool join(const shared_region::DoorbellPlace& doorbell) noexcept;

  static constexpr std::chrono::milliseconds kJoinAgainAfter{100};

  std::uint8_t* table_ = nullptr;  // the table it has an entry in, or tried to join
  std::size_t entry_ = 0;          // 0: none (the table was full)
  std::chrono::steady_clock::time_point next_join_;
  os::OwnSleeperEvent event_;
};

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
