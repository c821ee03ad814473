// os/process_start.h: a process's start names it while it runs, and nothing once it has ended,
// reaped or not. Real child processes; Linux (native x86-64, where /proc is), macOS and Windows.
#include "os/process_start.h"

#include <gtest/gtest.h>

#if (defined(__linux__) && defined(__x86_64__)) || defined(__APPLE__) || defined(_WIN32)
#include <chrono>
#include <thread>

#include "os/region_file.h"
#include "sleeping_child.h"

#if !defined(_WIN32)
#include <sys/wait.h>
#endif

namespace parklock {
namespace {

using testing::SleepingChild;

TEST(ProcessStartTest, ThisProcessHasAStartThatStaysTheSame) {
  const std::uint64_t start = os::process_start(os::current_pid());
  EXPECT_NE(start, os::kNoProcess);
  EXPECT_NE(start, os::kStartUnknown);
  EXPECT_EQ(os::process_start(os::current_pid()), start);
}

TEST(ProcessStartTest, NoPidNamesNoProcess) {
  EXPECT_EQ(os::process_start(0), os::kNoProcess);
  EXPECT_EQ(os::process_start(-1), os::kNoProcess);
}

TEST(ProcessStartTest, AChildHasAStartWhileItRunsAndNoneOnceKilledAndReaped) {
  SleepingChild child;
  const std::uint64_t start = os::process_start(child.pid());
  EXPECT_NE(start, os::kNoProcess);
  EXPECT_NE(start, os::kStartUnknown);
  EXPECT_EQ(os::process_start(child.pid()), start);
  child.kill();
  child.reap();
  EXPECT_EQ(os::process_start(child.pid()), os::kNoProcess);
}

TEST(ProcessStartTest, AKilledChildNotYetReapedHasEnded) {
  // A holder killed while its parent is blocked (on the holder's lock, say) stays a zombie until
  // the parent reaps it (on Windows: its process object stays while a handle holds it): it must
  // read as ended meanwhile, or the parent waits for ever.
  SleepingChild child;
  child.kill();
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (os::process_start(child.pid()) != os::kNoProcess &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(os::process_start(child.pid()), os::kNoProcess);
#if !defined(_WIN32)
  siginfo_t info{};
  // Still there to reap: it was a zombie, not gone.
  EXPECT_EQ(waitid(P_PID, static_cast<id_t>(child.pid()), &info, WEXITED | WNOHANG | WNOWAIT), 0);
  EXPECT_EQ(info.si_pid, child.pid());
#endif
}

}  // namespace
}  // namespace parklock

#endif
