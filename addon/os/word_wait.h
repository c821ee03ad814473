// Sleeping on one 32-bit word, which other processes may map, until it is woken: all that the
// doorbell (across_processes/doorbell.h) asks of the OS. Linux: the futex. macOS: the public
// os_sync_wait_on_address (macOS 14.4), looked up at run time, else __ulock_wait, which the
// parker (thread_parker_darwin.cpp) uses already, so the binary asks for no private call it did
// not ask for before.
#pragma once

#include <chrono>
#include <cstdint>

namespace parklock::os {

// Sleeps while `word` reads `expected`, until a wake_all_on_word() of it, `timeout`, or (rarely)
// for no reason: callers look at what they wait for again. `shared`: other processes map the word.
void wait_on_word(const std::uint32_t* word, std::uint32_t expected,
                  std::chrono::nanoseconds timeout, bool shared) noexcept;

// Wakes every sleeper on `word`, of every process where `shared`.
void wake_all_on_word(const std::uint32_t* word, bool shared) noexcept;

}  // namespace parklock::os
