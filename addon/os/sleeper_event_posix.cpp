// A doorbell sleeper's wake-up on Linux and macOS (sleeper_event.h): the signal word itself, which
// the OS sleeps on across processes.
#include "os/sleeper_event.h"

#if !defined(_WIN32)
#include "os/word_wait.h"

namespace parklock::os {

bool OwnSleeperEvent::open(const SleeperName&) noexcept {
  return true;
}

void OwnSleeperEvent::close() noexcept {}

void OwnSleeperEvent::wait(const std::uint32_t* signal, std::chrono::nanoseconds timeout) noexcept {
  wait_on_word(signal, kSleeperAsleep, timeout, /*shared=*/true);
}

SleeperEvents::~SleeperEvents() = default;

void SleeperEvents::wake(std::size_t, const SleeperName&, const std::uint32_t* signal) noexcept {
  wake_all_on_word(signal, /*shared=*/true);
}

}  // namespace parklock::os

#endif
