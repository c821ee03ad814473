// How a doorbell's sleeper (across_processes/doorbell.h) is woken from another process. Its entry
// in the region's header has a signal word; where the OS sleeps on a word that other processes
// map (Linux, macOS: os/word_wait.h) the sleeper sleeps on that word. Windows's WaitOnAddress
// stays within a process, so there each sleeper also has a named auto-reset event, which it alone
// waits on and which a ringer opens by name and sets: sleeper_event_windows.cpp.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace parklock::os {

// The signal word's values.
inline constexpr std::uint32_t kSleeperAwake = 0;     // looking at the doorbell, or about to
inline constexpr std::uint32_t kSleeperSignaled = 1;  // rung since it last looked
inline constexpr std::uint32_t kSleeperAsleep = 2;    // asleep: a ringer must wake it

// What names a sleeper's event: the region file's identity and the sleeper's key (its entry's).
struct SleeperName {
  std::uint64_t file_identity = 0;
  std::uint64_t key = 0;
};

// The sleeper's own side: opened as it takes its entry, closed as it gives it up.
class OwnSleeperEvent {
 public:
  OwnSleeperEvent() = default;
  OwnSleeperEvent(const OwnSleeperEvent&) = delete;
  OwnSleeperEvent& operator=(const OwnSleeperEvent&) = delete;
  ~OwnSleeperEvent() { close(); }

  bool open(const SleeperName& name) noexcept;
  void close() noexcept;
  // Sleeps while `signal` reads kSleeperAsleep, until a ringer's wake(), `timeout`, or (rarely)
  // for no reason.
  void wait(const std::uint32_t* signal, std::chrono::nanoseconds timeout) noexcept;

 private:
  std::intptr_t handle_ = 0;  // Windows: the event
};

// The ringers' side, one per mapped region: on Windows the events of other processes' sleepers,
// opened once per sleeper and kept open between rings.
class SleeperEvents {
 public:
  SleeperEvents() = default;
  SleeperEvents(const SleeperEvents&) = delete;
  SleeperEvents& operator=(const SleeperEvents&) = delete;
  ~SleeperEvents();

  // Wakes the sleeper of entry `entry`, named `name`, whose `signal` the caller has just changed
  // from kSleeperAsleep.
  void wake(std::size_t entry, const SleeperName& name, const std::uint32_t* signal) noexcept;

 private:
  struct Opened {
    std::uint64_t key = 0;
    std::intptr_t handle = 0;
  };
  std::mutex lock_;
  std::vector<Opened> opened_;  // by entry
};

}  // namespace parklock::os
