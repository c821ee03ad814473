#include "lot/thread_parker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "lot/interrupt.h"
#include "test_support.h"

namespace parklock {
namespace {

using namespace std::chrono_literals;
using Wake = ThreadParker::Wake;

TEST(ThreadParkerTest, AnUnparkBeforeTheParkIsNotLost) {
  ThreadParker parker;
  parker.unpark();
  EXPECT_EQ(parker.park(Deadline::never()), Wake::kUnparked);
}

TEST(ThreadParkerTest, ParkEndsAtTheDeadline) {
  ThreadParker parker;
  const auto start = Clock::now();
  EXPECT_EQ(parker.park(Deadline::at(start + 20ms)), Wake::kTimedOut);
  EXPECT_GE(Clock::now() - start, 20ms);
}

TEST(ThreadParkerTest, AnotherThreadsUnparkWakesIt) {
  for (int round = 0; round < 200; ++round) {
    ThreadParker parker;
    std::thread waker([&] { parker.unpark(); });
    EXPECT_EQ(parker.park(Deadline::after_ms(testing::kHangGuardMs)), Wake::kUnparked);
    waker.join();
  }
}

TEST(ThreadParkerTest, TheThreadsInterruptIsPolledWhileItSleeps) {
  std::atomic<bool> stop{false};
  const auto stop_requested = [&] { return stop.load(); };
  const Interrupt interrupt{1ms, stop_requested};
  const InterruptScope scope(&interrupt);
  ThreadParker parker;
  std::thread stopper([&] {
    std::this_thread::sleep_for(10ms);
    stop = true;
  });
  EXPECT_EQ(parker.park(Deadline::never()), Wake::kInterrupted);
  EXPECT_TRUE(ThreadParker::interrupt_requested());
  stopper.join();
}

TEST(ThreadParkerTest, AnUnparkWinsOverAnInterruptRequestedAtTheSameTime) {
  const auto always = [] { return true; };
  const Interrupt interrupt{1ms, always};
  const InterruptScope scope(&interrupt);
  ThreadParker parker;
  parker.unpark();
  EXPECT_EQ(parker.park(Deadline::never()), Wake::kUnparked);
}

TEST(ThreadParkerTest, ScopesNestAndRestoreTheOuterInterrupt) {
  const auto never = [] { return false; };
  const Interrupt outer{1ms, never};
  const Interrupt inner{1ms, never};
  EXPECT_EQ(current_interrupt(), nullptr);
  {
    const InterruptScope outer_scope(&outer);
    {
      const InterruptScope inner_scope(&inner);
      EXPECT_EQ(current_interrupt(), &inner);
    }
    EXPECT_EQ(current_interrupt(), &outer);
  }
  EXPECT_EQ(current_interrupt(), nullptr);
}

}  // namespace
}  // namespace parklock
