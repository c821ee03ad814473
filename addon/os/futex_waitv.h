// futex_waitv(2) (Linux 5.16): one sleep on up to kMostFutexWaitvWords futex words at once, for
// the relay threads of cross_process.h. Linux only.
#pragma once

#if defined(__linux__)
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

namespace parklock::cross_process {

// The kernel's struct futex_waitv, spelled out for older headers.
struct FutexWaitv {
  std::uint64_t value;
  std::uint64_t address;
  std::uint32_t flags;
  std::uint32_t reserved;
};
inline constexpr std::uint32_t kFutex2SizeU32 = 0x02;
inline constexpr std::uint32_t kFutex2Private = 128;
// The kernel refuses more (FUTEX_WAITV_MAX).
inline constexpr std::size_t kMostFutexWaitvWords = 128;

// A 32-bit word that the sleep ends on if it reads otherwise than `value`: `shared` for a word
// other processes map (the futex is keyed by the file page), else this process's own.
inline FutexWaitv futex_waitv_word(const void* word, std::int32_t value, bool shared) {
  return {static_cast<std::uint32_t>(value), reinterpret_cast<std::uintptr_t>(word),
          kFutex2SizeU32 | (shared ? 0 : kFutex2Private), 0};
}

// Sleeps until one of `words` is woken or reads otherwise, or `timeout` passes: the index of the
// word woken, or -1 with errno (EAGAIN: a word read otherwise already; ETIMEDOUT; ENOSYS: a
// kernel before 5.16).
inline long futex_waitv(const FutexWaitv* words, std::size_t count,
                        std::chrono::nanoseconds timeout) {
  timespec until{};
  clock_gettime(CLOCK_MONOTONIC, &until);
  const auto nanoseconds = until.tv_nsec + timeout.count();
  until.tv_sec += static_cast<time_t>(nanoseconds / 1000000000);
  until.tv_nsec = static_cast<long>(nanoseconds % 1000000000);
  return syscall(SYS_futex_waitv, words, count, 0, &until, CLOCK_MONOTONIC);
}

}  // namespace parklock::cross_process

#endif
