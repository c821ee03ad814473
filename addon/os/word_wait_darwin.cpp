// macOS (os/word_wait.h). os_sync_wait_on_address_with_timeout and os_sync_wake_by_address_all
// appeared in macOS 14.4; Node runs on 10.15 and later. They are looked up once with dlsym, so
// that the binary loads everywhere and names no symbol a system lacks; before 14.4 the same
// sleep is __ulock_wait's, whose _SHARED operation keys the wait by the page's file as
// OS_SYNC_WAIT_ON_ADDRESS_SHARED does.
#if defined(__APPLE__)

#include <dlfcn.h>

#include <cstddef>

#include "os/word_wait.h"

extern "C" int __ulock_wait(std::uint32_t operation, void* address, std::uint64_t value,
                            std::uint32_t timeout_us);
extern "C" int __ulock_wake(std::uint32_t operation, void* address, std::uint64_t wake_value);

namespace parklock::os {

namespace {

// <os/os_sync_wait_on_address.h> and <os/clock.h>, spelled out for SDKs older than 14.4.
constexpr std::uint32_t kOsSyncShared = 0x1;  // OS_SYNC_{WAIT_ON,WAKE_BY}_ADDRESS_SHARED
constexpr std::uint32_t kOsSyncNone = 0x0;
constexpr std::uint32_t kMachAbsoluteClock = 32;  // OS_CLOCK_MACH_ABSOLUTE_TIME
using WaitWithTimeout = int (*)(void* address, std::uint64_t value, std::size_t size,
                                std::uint32_t flags, std::uint32_t clock, std::uint64_t timeout_ns);
using WakeAll = int (*)(void* address, std::size_t size, std::uint32_t flags);

// <sys/ulock.h>, which is not in the SDK.
constexpr std::uint32_t kCompareAndWait = 1;        // UL_COMPARE_AND_WAIT
constexpr std::uint32_t kCompareAndWaitShared = 3;  // UL_COMPARE_AND_WAIT_SHARED
constexpr std::uint32_t kWakeAll = 0x100;           // ULF_WAKE_ALL
constexpr std::uint32_t kNoErrno = 0x01000000;      // ULF_NO_ERRNO

struct OsSync {
  WaitWithTimeout wait = nullptr;
  WakeAll wake_all = nullptr;
};

const OsSync& os_sync() {
  static const OsSync found = [] {
    OsSync calls;
    calls.wait = reinterpret_cast<WaitWithTimeout>(
        dlsym(RTLD_DEFAULT, "os_sync_wait_on_address_with_timeout"));
    calls.wake_all = reinterpret_cast<WakeAll>(dlsym(RTLD_DEFAULT, "os_sync_wake_by_address_all"));
    if (calls.wait == nullptr || calls.wake_all == nullptr) calls = {};
    return calls;
  }();
  return found;
}

}  // namespace

void wait_on_word(const std::uint32_t* word, std::uint32_t expected,
                  std::chrono::nanoseconds timeout, bool shared) noexcept {
  auto* address = const_cast<std::uint32_t*>(word);
  const OsSync& calls = os_sync();
  if (calls.wait != nullptr) {
    // A relative timeout, in nanoseconds, on the clock named.
    calls.wait(address, expected, sizeof(std::uint32_t), shared ? kOsSyncShared : kOsSyncNone,
               kMachAbsoluteClock, static_cast<std::uint64_t>(timeout.count()));
    return;
  }
  const auto microseconds = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
  __ulock_wait((shared ? kCompareAndWaitShared : kCompareAndWait) | kNoErrno, address, expected,
               static_cast<std::uint32_t>(microseconds > 0 ? microseconds : 1));
}

void wake_all_on_word(const std::uint32_t* word, bool shared) noexcept {
  auto* address = const_cast<std::uint32_t*>(word);
  const OsSync& calls = os_sync();
  if (calls.wake_all != nullptr) {
    calls.wake_all(address, sizeof(std::uint32_t), shared ? kOsSyncShared : kOsSyncNone);
    return;
  }
  __ulock_wake((shared ? kCompareAndWaitShared : kCompareAndWait) | kWakeAll | kNoErrno, address,
               0);
}

}  // namespace parklock::os

#endif
