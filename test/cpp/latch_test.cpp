// Tests of the countdown latch (latch.h) with real threads: checked count-downs, the release of
// every waiter by the count-down that reaches 0 (and by no other), visibility of what counting
// threads wrote, timeouts and interrupts, corrupt words, the one wait step run as a Promise wait
// and blocking, and the self-contained Latch class.
#include "primitives/latch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

#include "lot/atomic_ref.h"
#include "primitives/futex.h"
#include "test_support.h"

namespace parklock {
namespace {

using namespace std::chrono_literals;
using testing::kHangGuardMs;
using testing::PromiseWait;
using testing::StartBlockingWait;
using testing::ThreadGroup;
using testing::WaitUntil;
using testing::with_interrupt;
using CountDownStatus = LatchWord::CountDownStatus;

// A deadline for waits that should be released: a lost wake-up then ends as kTimedOut, a
// readable failure, instead of hanging the suite.
Deadline HangGuard() {
  return Deadline::after_ms(kHangGuardMs);
}

class LatchWordTest : public ::testing::Test {
 protected:
  std::int32_t raw() { return atomic_ref<std::int32_t>(words_[0]).load(); }
  void set_raw(std::int32_t value) { atomic_ref<std::int32_t>(words_[0]).store(value); }
  std::size_t queued() {
    return futex::queued_count(static_cast<const std::int32_t*>(latch_.address()));
  }

  alignas(LatchWord::kAlign) std::int32_t words_[LatchWord::kWordCount] = {};
  LatchWord latch_{words_};
};

TEST_F(LatchWordTest, ZeroedMemoryIsAnOpenLatch) {
  EXPECT_EQ(latch_.count(), 0);
  EXPECT_TRUE(latch_.try_wait());
  EXPECT_EQ(latch_.wait(Deadline::after_ms(0)), Outcome::kAcquired);
  EXPECT_EQ(latch_.wait(), Outcome::kAcquired) << "no deadline: an open latch never blocks";
  EXPECT_EQ(queued(), 0u);
}

TEST_F(LatchWordTest, InitWritesTheCountAndOnlyTheLastCountDownReleases) {
  latch_.init(5);
  EXPECT_EQ(raw(), 5);
  EXPECT_FALSE(latch_.try_wait());

  auto result = latch_.count_down();
  EXPECT_EQ(result.status, CountDownStatus::kCounted);
  EXPECT_EQ(result.count, 4);
  result = latch_.count_down(3);
  EXPECT_EQ(result.status, CountDownStatus::kCounted);
  EXPECT_EQ(result.count, 1);
  EXPECT_FALSE(latch_.try_wait());
  result = latch_.count_down(1);
  EXPECT_EQ(result.status, CountDownStatus::kReleased);
  EXPECT_EQ(result.count, 0);
  EXPECT_TRUE(latch_.try_wait());
  EXPECT_EQ(raw(), 0);
}

TEST_F(LatchWordTest, CountDownRefusesNonPositiveAndExcessiveAmountsWithoutChangingTheCount) {
  latch_.init(3);
  for (std::int32_t n : {0, -1, -3, std::numeric_limits<std::int32_t>::min()}) {
    const auto result = latch_.count_down(n);
    EXPECT_EQ(result.status, CountDownStatus::kNotPositive) << "n = " << n;
    EXPECT_EQ(raw(), 3);
  }
  for (std::int32_t n : {4, 100, LatchWord::kMaxCount}) {
    const auto result = latch_.count_down(n);
    EXPECT_EQ(result.status, CountDownStatus::kExceedsCount) << "n = " << n;
    EXPECT_EQ(result.count, 3) << "reports the count it found";
    EXPECT_EQ(raw(), 3);
  }
  EXPECT_EQ(latch_.count_down(3).status, CountDownStatus::kReleased);
  EXPECT_EQ(latch_.count_down(1).status, CountDownStatus::kExceedsCount)
      << "an open latch has nothing left to count down";
  EXPECT_EQ(raw(), 0);
}

TEST_F(LatchWordTest, TheLargestCountCanBeCountedDownInOneStep) {
  latch_.init(LatchWord::kMaxCount);
  EXPECT_EQ(latch_.count_down(LatchWord::kMaxCount).status, CountDownStatus::kReleased);
  EXPECT_TRUE(latch_.try_wait());
}

TEST_F(LatchWordTest, ACorruptWordIsReportedNeverWaitedOn) {
  for (std::int32_t bad : {-1, -2, std::numeric_limits<std::int32_t>::min()}) {
    set_raw(bad);
    EXPECT_EQ(latch_.count_down(1).status, CountDownStatus::kCorrupt);
    EXPECT_EQ(raw(), bad) << "a refused count-down leaves the word alone";
    EXPECT_FALSE(latch_.try_wait());
    EXPECT_EQ(latch_.wait(), Outcome::kCorrupt) << "no deadline: a corrupt word must not hang";
    EXPECT_EQ(queued(), 0u);
  }
}

TEST_F(LatchWordTest, AWaitOnAClosedLatchTimesOutAndLeavesNoWaiter) {
  latch_.init(1);
  for (double ms : {0.0, 1.0, 20.0}) {
    EXPECT_EQ(latch_.wait(Deadline::after_ms(ms)), Outcome::kTimedOut) << ms << " ms";
    EXPECT_EQ(queued(), 0u);
  }
  EXPECT_EQ(raw(), 1);
}

TEST_F(LatchWordTest, EveryBlockedWaiterIsReleasedByTheLastCountDownAndNotBefore) {
  constexpr int kWaiters = 6;
  latch_.init(3);
  std::atomic<int> released{0};
  std::vector<Outcome> statuses(kWaiters, Outcome::kTimedOut);
  ThreadGroup threads;
  for (int i = 0; i < kWaiters; ++i) {
    threads.Start([&, i] {
      statuses[i] = latch_.wait(HangGuard());
      released.fetch_add(1);
    });
  }
  ASSERT_TRUE(WaitUntil([&] { return queued() == kWaiters; }));

  EXPECT_EQ(latch_.count_down(2).status, CountDownStatus::kCounted);
  // Counting down to a non-zero count wakes nobody: the waiters stay queued.
  EXPECT_EQ(queued(), static_cast<std::size_t>(kWaiters));
  EXPECT_EQ(released.load(), 0);

  EXPECT_EQ(latch_.count_down().status, CountDownStatus::kReleased);
  threads.JoinOrAbort();
  for (Outcome status : statuses) EXPECT_EQ(status, Outcome::kAcquired);
  EXPECT_EQ(queued(), 0u);
}

TEST_F(LatchWordTest, ConcurrentCountDownsAreExactAndExactlyOneReleases) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 2000;
  latch_.init(kThreads * kPerThread);
  std::atomic<int> releases{0};
  std::atomic<int> refused{0};
  ThreadGroup threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.Start([&, t] {
      // Count down this thread's share in steps of 1 to 3, so that steps race at the end.
      int left = kPerThread;
      while (left > 0) {
        const std::int32_t n = std::min(left, 1 + (t + left) % 3);
        const auto result = latch_.count_down(n);
        if (result.status == CountDownStatus::kExceedsCount) {
          refused.fetch_add(1);  // cannot happen: every thread takes only its own share
          continue;
        }
        if (result.status == CountDownStatus::kReleased) releases.fetch_add(1);
        left -= n;
      }
    });
  }
  threads.JoinOrAbort();
  EXPECT_EQ(raw(), 0);
  EXPECT_EQ(releases.load(), 1);
  EXPECT_EQ(refused.load(), 0);
}

TEST_F(LatchWordTest, WhatCountingThreadsWroteIsVisibleToEveryReleasedWaiter) {
  constexpr int kCounters = 4;
  constexpr int kWaiters = 4;
  constexpr int kRounds = 200;
  for (int round = 0; round < kRounds; ++round) {
    std::int32_t words[LatchWord::kWordCount] = {};
    LatchWord latch(words);
    latch.init(kCounters);
    int slots[kCounters] = {};  // plain memory: only the latch orders it
    std::atomic<int> bad{0};
    ThreadGroup threads;
    for (int w = 0; w < kWaiters; ++w) {
      threads.Start([&] {
        if (latch.wait(HangGuard()) != Outcome::kAcquired) bad.fetch_add(1);
        for (int slot : slots) {
          if (slot != round + 1) bad.fetch_add(1);
        }
      });
    }
    for (int c = 0; c < kCounters; ++c) {
      threads.Start([&, c] {
        slots[c] = round + 1;
        latch.count_down();
      });
    }
    threads.JoinOrAbort();
    ASSERT_EQ(bad.load(), 0) << "round " << round;
    ASSERT_EQ(futex::queued_count(static_cast<const std::int32_t*>(latch.address())), 0u);
  }
}

TEST_F(LatchWordTest, WaitersWithTinyDeadlinesRacingTheReleaseAreNeverStranded) {
  constexpr int kWaiters = 6;
  constexpr int kRounds = 100;
  for (int round = 0; round < kRounds; ++round) {
    std::int32_t words[LatchWord::kWordCount] = {};
    LatchWord latch(words);
    latch.init(2);
    std::atomic<int> released{0};
    ThreadGroup threads;
    for (int w = 0; w < kWaiters; ++w) {
      threads.Start([&, w] {
        // Short waits in a loop: each one parks and leaves, racing the release.
        const auto limit = Clock::now() + testing::kWaitLimit;
        while (Clock::now() < limit) {
          const Outcome status = latch.wait(Deadline::at(Clock::now() + (w % 3) * 20us));
          if (status == Outcome::kAcquired) {
            released.fetch_add(1);
            return;
          }
        }
      });
    }
    threads.Start([&] {
      latch.count_down();
      std::this_thread::yield();
      latch.count_down();
    });
    threads.JoinOrAbort();
    ASSERT_EQ(released.load(), kWaiters) << "round " << round;
    ASSERT_EQ(futex::queued_count(static_cast<const std::int32_t*>(latch.address())), 0u);
  }
}

TEST_F(LatchWordTest, AnInterruptedWaitEndsAndLeavesNoWaiter) {
  latch_.init(1);
  std::atomic<bool> stop{false};
  const auto stop_requested = [&] { return stop.load(); };
  const Interrupt interrupt{std::chrono::milliseconds(1), stop_requested};
  Outcome status = Outcome::kAcquired;
  ThreadGroup threads;
  threads.Start(
      [&] { status = with_interrupt(&interrupt, [&] { return latch_.wait(Deadline::never()); }); });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 1; }));
  stop = true;
  threads.JoinOrAbort(testing::kWaitLimit);
  EXPECT_EQ(status, Outcome::kInterrupted);
  EXPECT_EQ(queued(), 0u);
  EXPECT_EQ(raw(), 1) << "an interrupted wait does not count down";
}

// The one wait step serves both forms: a Promise wait and a blocking wait, both released by the
// last count-down and by no earlier one.
TEST_F(LatchWordTest, OneAwaitStepServesAPromiseWaitAndABlockingWait) {
  latch_.init(2);
  testing::PromiseStep<LatchWord::AwaitStep> promise(latch_);
  ASSERT_EQ(promise.Start(), Outcome::kPending);
  std::atomic<Outcome> blocking{Outcome::kPending};
  ThreadGroup threads;
  StartBlockingWait<LatchWord::AwaitStep>(threads, blocking, latch_);
  ASSERT_TRUE(WaitUntil([&] { return queued() == 2; }));
  EXPECT_EQ(latch_.count_down().status, CountDownStatus::kCounted);
  EXPECT_EQ(queued(), 2u);
  EXPECT_EQ(promise.waiter().wake_count(), 0u);
  EXPECT_EQ(latch_.count_down().status, CountDownStatus::kReleased);
  EXPECT_EQ(promise.Settle(), Outcome::kAcquired);
  threads.JoinOrAbort();
  EXPECT_EQ(blocking.load(), Outcome::kAcquired);
  EXPECT_EQ(queued(), 0u);

  testing::PromiseStep<LatchWord::AwaitStep> open(latch_);
  EXPECT_EQ(open.Start(), Outcome::kAcquired) << "an open latch settles at once";
}

// A cancelled Promise wait reports the latch open if it is (the count is checked last, also when
// the release's wake-up was already on its way), a corrupt word as corrupt, and else kCancelled.
TEST_F(LatchWordTest, APromiseWaitCancelledReportsWhatTheCountSaysLast) {
  latch_.init(1);
  testing::PromiseStep<LatchWord::AwaitStep> closed(latch_);
  ASSERT_EQ(closed.Start(), Outcome::kPending);
  EXPECT_EQ(closed.Cancel(), Outcome::kCancelled);
  EXPECT_EQ(queued(), 0u);

  testing::PromiseStep<LatchWord::AwaitStep> corrupt(latch_);
  ASSERT_EQ(corrupt.Start(), Outcome::kPending);
  set_raw(-1);
  EXPECT_EQ(corrupt.Cancel(), Outcome::kCorrupt);
  set_raw(1);

  testing::PromiseStep<LatchWord::AwaitStep> racing(latch_);
  ASSERT_EQ(racing.Start(), Outcome::kPending);
  EXPECT_EQ(latch_.count_down().status, CountDownStatus::kReleased);
  ASSERT_TRUE(racing.waiter().WaitForWakes(1));
  EXPECT_EQ(racing.Cancel(), Outcome::kAcquired) << "the release's wake-up came first";
  EXPECT_EQ(queued(), 0u);
}

// A futex notify of the latch's word wakes a blocking waiter with nothing to take: it queues
// again, and is released by the last count-down.
TEST_F(LatchWordTest, ABlockingWaitWokenEarlyQueuesAgain) {
  latch_.init(1);
  std::atomic<Outcome> blocking{Outcome::kPending};
  ThreadGroup threads;
  StartBlockingWait<LatchWord::AwaitStep>(threads, blocking, latch_);
  ASSERT_TRUE(WaitUntil([&] { return queued() == 1; }));
  EXPECT_EQ(futex::notify(words_, 1), 1u);
  ASSERT_TRUE(WaitUntil([&] { return queued() == 1; })) << "the blocking waiter queues again";
  EXPECT_EQ(blocking.load(), Outcome::kPending);
  EXPECT_EQ(latch_.count_down().status, CountDownStatus::kReleased);
  threads.JoinOrAbort();
  EXPECT_EQ(blocking.load(), Outcome::kAcquired);
  EXPECT_EQ(queued(), 0u);
}

// A waiter that gives up a wake-up passes it on: it may have been a notify meant for one waiter.
TEST_F(LatchWordTest, AWakeUpAbandonedGoesToTheNextWaiter) {
  latch_.init(1);
  testing::PromiseStep<LatchWord::AwaitStep> first(latch_);
  ASSERT_EQ(first.Start(), Outcome::kPending);
  testing::PromiseStep<LatchWord::AwaitStep> second(latch_);
  ASSERT_EQ(second.Start(), Outcome::kPending);
  EXPECT_EQ(futex::notify(words_, 1), 1u);
  ASSERT_TRUE(first.waiter().WaitForWakes(1));
  EXPECT_EQ(second.waiter().wake_count(), 0u);
  first.step().abandon(first.waiter(), first.waiter().last_token());
  EXPECT_EQ(second.Settle(), Outcome::kPending) << "woken early: queued again";
  EXPECT_EQ(latch_.count_down().status, CountDownStatus::kReleased);
  EXPECT_EQ(second.Settle(), Outcome::kAcquired);
  EXPECT_EQ(queued(), 0u);
}

TEST(LatchTest, ConstructorAndCountDownCheckTheirArguments) {
  EXPECT_THROW(Latch(-1), std::invalid_argument);
  Latch latch(2);
  EXPECT_EQ(latch.count(), 2);
  EXPECT_THROW(latch.count_down(0), std::invalid_argument);
  EXPECT_THROW(latch.count_down(3), std::invalid_argument);
  EXPECT_EQ(latch.count(), 2);
  latch.count_down(2);
  EXPECT_TRUE(latch.try_wait());
  EXPECT_THROW(latch.count_down(), std::invalid_argument);
  EXPECT_EQ(Latch(0).count(), 0);
}

TEST(LatchTest, WaitForTimesOutWhileClosedAndReturnsTrueOnceOpen) {
  Latch latch(1);
  EXPECT_FALSE(latch.wait_for(1ms));
  EXPECT_FALSE(latch.try_wait());
  ThreadGroup threads;
  threads.Start([&] { latch.count_down(); });
  EXPECT_TRUE(latch.wait_for(testing::kWaitLimit));
  threads.JoinOrAbort();
  EXPECT_TRUE(latch.wait_for(0ms));
}

TEST(LatchTest, ArriveAndWaitReleasesEveryThreadTogether) {
  constexpr int kThreads = 5;
  Latch latch(kThreads);
  std::atomic<int> arrived{0};
  std::atomic<int> early{0};
  ThreadGroup threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.Start([&] {
      arrived.fetch_add(1);
      latch.arrive_and_wait();
      if (arrived.load() != kThreads) early.fetch_add(1);
    });
  }
  threads.JoinOrAbort();
  EXPECT_EQ(early.load(), 0);
  EXPECT_EQ(latch.count(), 0);
}

}  // namespace
}  // namespace parklock
