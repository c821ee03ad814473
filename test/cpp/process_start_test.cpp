// os/process_start.h: a process's start names it while it runs, and nothing once it has ended,
// reaped or not. Real child processes; Linux (native x86-64, where /proc is) and macOS.
#include "os/process_start.h"

#include <gtest/gtest.h>

#if (defined(__linux__) && defined(__x86_64__)) || defined(__APPLE__)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace parklock {
namespace {

// A child that sleeps until killed.
pid_t sleeping_child() {
  const pid_t child = fork();
  if (child == 0) {
    for (;;) pause();
  }
  return child;
}

TEST(ProcessStartTest, ThisProcessHasAStartThatStaysTheSame) {
  const std::uint64_t start = os::process_start(static_cast<std::int32_t>(getpid()));
  EXPECT_NE(start, os::kNoProcess);
  EXPECT_NE(start, os::kStartUnknown);
  EXPECT_EQ(os::process_start(static_cast<std::int32_t>(getpid())), start);
}

TEST(ProcessStartTest, NoPidNamesNoProcess) {
  EXPECT_EQ(os::process_start(0), os::kNoProcess);
  EXPECT_EQ(os::process_start(-1), os::kNoProcess);
}

TEST(ProcessStartTest, AChildHasAStartWhileItRunsAndNoneOnceKilledAndReaped) {
  const pid_t child = sleeping_child();
  ASSERT_GT(child, 0);
  const std::uint64_t start = os::process_start(child);
  EXPECT_NE(start, os::kNoProcess);
  EXPECT_NE(start, os::kStartUnknown);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(os::process_start(child), os::kNoProcess);
}

TEST(ProcessStartTest, AKilledChildNotYetReapedHasEnded) {
  // A holder killed while its parent is blocked (on the holder's lock, say) stays a zombie until
  // the parent reaps it: it must read as ended meanwhile, or the parent waits for ever.
  const pid_t child = sleeping_child();
  ASSERT_GT(child, 0);
  kill(child, SIGKILL);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (os::process_start(child) != os::kNoProcess && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(os::process_start(child), os::kNoProcess);
  siginfo_t info{};
  // Still there to reap: it was a zombie, not gone.
  EXPECT_EQ(waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOHANG | WNOWAIT), 0);
  EXPECT_EQ(info.si_pid, child);
  waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace parklock

#endif
