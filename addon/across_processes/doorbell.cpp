#include "across_processes/doorbell.h"

#include "across_processes/mechanism.h"

#if defined(PARKLOCK_ACROSS_PROCESSES)
#include <algorithm>
#include <atomic>
#include <thread>

#include "lot/atomic_ref.h"
#include "os/process_start.h"

namespace parklock::cross_process {

namespace {

using shared_region::kSleeperBytes;
using shared_region::kSleeperEntries;

atomic_ref<std::uint32_t> entries_taken(std::uint8_t* table) {
  return atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(table));
}
atomic_ref<std::uint64_t> key_of(std::uint8_t* table, std::size_t entry) {
  return atomic_ref<std::uint64_t>(
      *reinterpret_cast<std::uint64_t*>(table + entry * kSleeperBytes));
}
atomic_ref<std::uint64_t> start_of(std::uint8_t* table, std::size_t entry) {
  return atomic_ref<std::uint64_t>(
      *reinterpret_cast<std::uint64_t*>(table + entry * kSleeperBytes + 8));
}
std::uint32_t* signal_word(std::uint8_t* table, std::size_t entry) {
  return reinterpret_cast<std::uint32_t*>(table + entry * kSleeperBytes + 16);
}
atomic_ref<std::uint32_t> signal_of(std::uint8_t* table, std::size_t entry) {
  return atomic_ref<std::uint32_t>(*signal_word(table, entry));
}

std::uint64_t own_start() {
  static const std::uint64_t start = os::process_start(os::current_pid());
  return start;
}

// Whether the sleeper of `key`, whose process started at `start`, has ended (its entry may be
// taken again). This process's own are alive: its relays give theirs up as they leave.
bool sleeper_ended(std::uint64_t key, std::uint64_t start) {
  const auto pid = static_cast<std::int32_t>(key >> 32);
  if (pid == os::current_pid()) return false;
  const std::uint64_t now = os::process_start(pid);
  if (now == os::kNoProcess) return true;
  return now != os::kStartUnknown && start != os::kStartUnknown && now != start;
}

// Every sleeper of the doorbell that is asleep is woken; every other is signaled, and sees it
// before it sleeps. The caller has counted its ring or announcement first (doorbell.h).
void wake_sleepers(const shared_region::DoorbellPlace& doorbell) noexcept {
  std::uint8_t* table = doorbell.sleepers;
  const std::size_t taken =
      std::min<std::size_t>(entries_taken(table).load(std::memory_order_seq_cst), kSleeperEntries);
  for (std::size_t entry = 1; entry < taken; ++entry) {
    const std::uint64_t key = key_of(table, entry).load(std::memory_order_seq_cst);
    if (key == 0 || key == kClaimingSleeper) continue;
    if (signal_of(table, entry).load(std::memory_order_seq_cst) == os::kSleeperSignaled) continue;
    if (signal_of(table, entry).exchange(os::kSleeperSignaled, std::memory_order_seq_cst) !=
        os::kSleeperAsleep) {
      continue;
    }
    // The key of the sleeper that went to sleep, read after its signal: the entry may have been
    // given up and taken again since `key` was read (a Windows event is named after the key).
    const std::uint64_t asleep = key_of(table, entry).load(std::memory_order_seq_cst);
    if (asleep != 0 && asleep != kClaimingSleeper) {
      doorbell.events->wake(entry, {doorbell.file_identity, asleep}, signal_word(table, entry));
    }
  }
}

}  // namespace

void ring(const shared_region::DoorbellPlace& doorbell, const void* word) noexcept {
  const std::uint32_t number =
      atomic_ref<std::uint32_t>(*doorbell.rings).fetch_add(1, std::memory_order_acq_rel) &
      kRingMask;
  atomic_ref<std::uint64_t>(doorbell.recent[number % shared_region::kRecentRings])
      .store((std::uint64_t{kNoted | number} << 32) | word_index(doorbell, word),
             std::memory_order_release);
  wake_sleepers(doorbell);
}

void announce(const shared_region::DoorbellPlace& doorbell) noexcept {
  atomic_ref<std::uint32_t>(*doorbell.rings)
      .fetch_add(std::uint32_t{1} << kRingBits, std::memory_order_seq_cst);
  wake_sleepers(doorbell);
}

bool DoorbellSleeper::join(const shared_region::DoorbellPlace& doorbell) noexcept {
  static std::atomic<std::uint32_t> numbers{0};
  std::uint8_t* table = doorbell.sleepers;
  table_ = table;
  next_join_ = std::chrono::steady_clock::now() + kJoinAgainAfter;
  const std::uint64_t key = (std::uint64_t{static_cast<std::uint32_t>(os::current_pid())} << 32) |
                            (numbers.fetch_add(1, std::memory_order_relaxed) + 1);
  if (!event_.open({doorbell.file_identity, key})) return false;
  // Claimed first, so that nobody judges its process by the start of the process that had it
  // before. `dead`: an entry whose sleeper has ended may be taken too.
  const auto claim = [&](std::size_t entry, bool dead) {
    std::uint64_t seen = key_of(table, entry).load(std::memory_order_acquire);
    if (seen == kClaimingSleeper) return false;
    if (seen != 0 &&
        (!dead || !sleeper_ended(seen, start_of(table, entry).load(std::memory_order_relaxed)))) {
      return false;
    }
    return key_of(table, entry)
        .compare_exchange_strong(seen, kClaimingSleeper, std::memory_order_acq_rel);
  };
  // A free entry below the count; else a new one; else, the table full, one whose sleeper ended
  // (asking after a process is a system call: only then).
  const auto free_below = [&](bool dead) {
    const std::size_t taken = std::min<std::size_t>(
        entries_taken(table).load(std::memory_order_acquire), kSleeperEntries);
    for (std::size_t i = 1; i < taken; ++i) {
      if (claim(i, dead)) return i;
    }
    return std::size_t{0};
  };
  std::size_t entry = free_below(false);
  while (entry == 0) {
    std::uint32_t count = entries_taken(table).load(std::memory_order_acquire);
    const std::uint32_t next = std::max<std::uint32_t>(count, 1);  // entry 0 holds the count
    if (next >= kSleeperEntries) {
      entry = free_below(true);
      if (entry != 0) break;
      event_.close();
      return false;
    }
    if (!entries_taken(table).compare_exchange_strong(count, next + 1, std::memory_order_seq_cst)) {
      continue;
    }
    if (claim(next, false)) entry = next;
  }
  start_of(table, entry).store(own_start(), std::memory_order_relaxed);
  signal_of(table, entry).store(os::kSleeperAwake, std::memory_order_relaxed);
  key_of(table, entry).store(key, std::memory_order_seq_cst);
  entry_ = entry;
  return true;
}

void DoorbellSleeper::leave() noexcept {
  if (entry_ != 0) {
    key_of(table_, entry_).store(0, std::memory_order_release);
    event_.close();
  }
  table_ = nullptr;
  entry_ = 0;
}

void DoorbellSleeper::sleep(const shared_region::DoorbellPlace& doorbell, std::uint32_t seen,
                            std::chrono::nanoseconds timeout) noexcept {
  // Without an entry (the table was full), it tries again now and then.
  if (table_ != doorbell.sleepers ||
      (entry_ == 0 && std::chrono::steady_clock::now() >= next_join_)) {
    leave();
    join(doorbell);
  }
  const auto rings = [&doorbell] {
    return atomic_ref<std::uint32_t>(*doorbell.rings).load(std::memory_order_seq_cst);
  };
  if (entry_ == 0) {
    // No entry: the table is full of live sleepers.
    if (rings() == seen)
      std::this_thread::sleep_for(
          std::min<std::chrono::nanoseconds>(timeout, std::chrono::milliseconds(1)));
    return;
  }
  const atomic_ref<std::uint32_t> signal = signal_of(table_, entry_);
  signal.store(os::kSleeperAwake, std::memory_order_seq_cst);
  if (rings() != seen) return;
  std::uint32_t awake = os::kSleeperAwake;
  // Signaled since it looked: a ring after it.
  if (!signal.compare_exchange_strong(awake, os::kSleeperAsleep, std::memory_order_seq_cst)) return;
  event_.wait(signal_word(table_, entry_), timeout);
  signal.store(os::kSleeperAwake, std::memory_order_seq_cst);
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
