// Hand-off latency of the two Windows parkers the core could use: WaitOnAddress on a word (what
// addon/os/thread_parker_windows.cpp does) and an SRW lock with a condition variable. Two threads
// pass a token back and forth; each pass is one park and one unpark, as a lock hand-off is. Prints
// the mean round trip of each. Built and run by bench/windows-parker.sh (zig, then Wine or
// Windows).
#if defined(_WIN32)

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

// Each parker is parked on by one thread and unparked by the other; the woken flag is consumed by
// park(), so that one parker serves every round.
struct AddressParker {
  std::atomic<std::uint32_t> woken{0};
  void park() {
    std::uint32_t parked = 0;
    while (woken.load(std::memory_order_acquire) == 0) {
      WaitOnAddress(reinterpret_cast<volatile VOID*>(&woken), &parked, sizeof(parked), INFINITE);
    }
    woken.store(0, std::memory_order_relaxed);
  }
  void unpark() {
    woken.store(1, std::memory_order_release);
    WakeByAddressSingle(reinterpret_cast<PVOID>(&woken));
  }
};

struct SrwParker {
  SRWLOCK lock = SRWLOCK_INIT;
  CONDITION_VARIABLE wake = CONDITION_VARIABLE_INIT;
  bool woken = false;
  void park() {
    AcquireSRWLockExclusive(&lock);
    while (!woken) SleepConditionVariableSRW(&wake, &lock, INFINITE, 0);
    woken = false;
    ReleaseSRWLockExclusive(&lock);
  }
  void unpark() {
    AcquireSRWLockExclusive(&lock);
    woken = true;
    WakeConditionVariable(&wake);
    ReleaseSRWLockExclusive(&lock);
  }
};

template <typename Parker>
double round_trip_us(int rounds) {
  Parker ping;
  Parker pong;
  std::thread other([&] {
    for (int i = 0; i < rounds; i++) {
      ping.park();
      pong.unpark();
    }
  });
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < rounds; i++) {
    ping.unpark();
    pong.park();
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  other.join();
  return std::chrono::duration<double, std::micro>(elapsed).count() / rounds;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 20000;
  for (int run = 0; run < 3; run++) {
    std::printf("WaitOnAddress      %8.2f us per round trip\n",
                round_trip_us<AddressParker>(rounds));
    std::printf("SRW lock + condvar %8.2f us per round trip\n", round_trip_us<SrwParker>(rounds));
  }
  return 0;
}

#else
int main() {
  return 0;
}
#endif
