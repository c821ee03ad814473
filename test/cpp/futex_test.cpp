// futex::wait / notify with real threads, and the one wait step run as a Promise wait and blocking.
#include "primitives/futex.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>

#include "lot/atomic_ref.h"
#include "test_support.h"

namespace parklock {
namespace {

using testing::kWaitLimitMs;
using testing::PromiseWait;
using testing::RecordingWaiter;
using testing::StartBlockingWait;
using testing::ThreadGroup;
using testing::WaitUntil;

TEST(FutexTest, WaitReturnsAtOnceWhenTheValueDiffers) {
  alignas(4) std::int32_t word = 1;
  EXPECT_EQ(futex::wait(&word, 0, Deadline::never()), Outcome::kNotEqual);
  EXPECT_EQ(futex::queued_count(&word), 0u);
}

TEST(FutexTest, WaitTimesOutAndLeavesTheQueue) {
  alignas(4) std::int32_t word = 0;
  EXPECT_EQ(futex::wait(&word, 0, Deadline::after_ms(2)), Outcome::kTimedOut);
  EXPECT_EQ(futex::queued_count(&word), 0u);
}

TEST(FutexTest, NotifyWakesAtMostCountWaitersOldestFirst) {
  alignas(4) std::int32_t word = 0;
  constexpr int kWaiters = 4;
  std::atomic<int> woken{0};
  ThreadGroup waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.Start([&] {
      EXPECT_EQ(futex::wait(&word, 0, Deadline::after_ms(kWaitLimitMs)), Outcome::kAcquired);
      woken.fetch_add(1);
    });
  }
  ASSERT_TRUE(WaitUntil([&] { return futex::queued_count(&word) == kWaiters; }));
  EXPECT_EQ(futex::notify(&word, 1), 1u);
  ASSERT_TRUE(WaitUntil([&] { return woken.load() == 1; }));
  EXPECT_EQ(futex::queued_count(&word), kWaiters - 1u);
  EXPECT_EQ(futex::notify(&word, 100), kWaiters - 1u);
  waiters.JoinOrAbort();
  EXPECT_EQ(woken.load(), kWaiters);
  EXPECT_EQ(futex::notify(&word, 1), 0u);
}

TEST(FutexTest, AsyncWaiterIsQueuedOnlyWhileTheValueMatches) {
  alignas(4) std::int32_t word = 7;
  RecordingWaiter waiter;
  EXPECT_FALSE(futex::enqueue_if_equal(&word, 8, waiter));
  ASSERT_TRUE(futex::enqueue_if_equal(&word, 7, waiter));
  EXPECT_EQ(futex::notify(&word, 1), 1u);
  ASSERT_TRUE(waiter.WaitForWakes(1));
  EXPECT_EQ(waiter.last_token(), futex::kNotified);
}

// A counter bumped and notified by one thread, waited on by others: the classic lost-wake-up
// pattern. Every waiter must see the final value.
TEST(FutexTest, NoWakeUpIsLostBetweenCheckAndSleep) {
  alignas(4) std::int32_t word = 0;
  atomic_ref<std::int32_t> value(word);
  constexpr int kRounds = 2000;
  constexpr int kWaiters = 3;
  ThreadGroup threads;
  for (int w = 0; w < kWaiters; ++w) {
    threads.Start([&] {
      for (;;) {
        const std::int32_t seen = value.load();
        if (seen == kRounds) return;
        // No deadline: a lost wake-up hangs here, and the group reports it.
        futex::wait(&word, seen, Deadline::never());
      }
    });
  }
  threads.Start([&] {
    for (int i = 0; i < kRounds; ++i) {
      value.fetch_add(1);
      futex::notify(&word, SIZE_MAX);
    }
  });
  threads.JoinOrAbort();
  EXPECT_EQ(futex::queued_count(&word), 0u);
}

// The one wait step serves both forms, oldest first: a Promise wait queued first, a blocking wait
// behind it.
TEST(FutexTest, OneAwaitStepServesAPromiseWaitAndABlockingWait) {
  alignas(4) std::int32_t word = 0;
  futex::AwaitStep other_value(&word, 1);
  PromiseWait not_equal(other_value);
  EXPECT_EQ(not_equal.Start(), Outcome::kNotEqual);

  testing::PromiseStep<futex::AwaitStep> promise(&word, 0);
  ASSERT_EQ(promise.Start(), Outcome::kPending);
  std::atomic<Outcome> blocking{Outcome::kPending};
  ThreadGroup threads;
  StartBlockingWait<futex::AwaitStep>(threads, blocking, &word, 0);
  ASSERT_TRUE(WaitUntil([&] { return futex::queued_count(&word) == 2; }));
  EXPECT_EQ(futex::notify(&word, 1), 1u);
  EXPECT_EQ(promise.Settle(), Outcome::kAcquired);
  EXPECT_EQ(blocking.load(), Outcome::kPending);
  EXPECT_EQ(futex::notify(&word, 1), 1u);
  threads.JoinOrAbort();
  EXPECT_EQ(blocking.load(), Outcome::kAcquired);
  EXPECT_EQ(futex::queued_count(&word), 0u);
}

// A cancelled Promise wait leaves the queue; one whose notification was already on its way
// reports it.
TEST(FutexTest, APromiseWaitCancelledReportsANotificationThatCameFirst) {
  alignas(4) std::int32_t word = 0;
  testing::PromiseStep<futex::AwaitStep> queued(&word, 0);
  ASSERT_EQ(queued.Start(), Outcome::kPending);
  EXPECT_EQ(queued.Cancel(), Outcome::kCancelled);
  EXPECT_EQ(futex::queued_count(&word), 0u);

  testing::PromiseStep<futex::AwaitStep> notified(&word, 0);
  ASSERT_EQ(notified.Start(), Outcome::kPending);
  EXPECT_EQ(futex::notify(&word, 1), 1u);
  ASSERT_TRUE(notified.waiter().WaitForWakes(1));
  EXPECT_EQ(notified.Cancel(), Outcome::kAcquired);
  EXPECT_EQ(futex::notify(&word, 1), 0u) << "the notification was taken, not passed on";
}

// A notification that its waiter gives up goes to the next waiter, Promise or blocking.
TEST(FutexTest, ANotificationAbandonedGoesToTheNextWaiter) {
  alignas(4) std::int32_t word = 0;
  testing::PromiseStep<futex::AwaitStep> first(&word, 0);
  ASSERT_EQ(first.Start(), Outcome::kPending);
  std::atomic<Outcome> blocking{Outcome::kPending};
  ThreadGroup threads;
  StartBlockingWait<futex::AwaitStep>(threads, blocking, &word, 0);
  ASSERT_TRUE(WaitUntil([&] { return futex::queued_count(&word) == 2; }));
  EXPECT_EQ(futex::notify(&word, 1), 1u);
  ASSERT_TRUE(first.waiter().WaitForWakes(1));
  first.step().abandon(first.waiter(), first.waiter().last_token());
  threads.JoinOrAbort();
  EXPECT_EQ(blocking.load(), Outcome::kAcquired);
  EXPECT_EQ(futex::queued_count(&word), 0u);
}

// A blocking wait whose thread is stopped leaves the queue.
TEST(FutexTest, AnInterruptedBlockingWaitLeavesNoWaiter) {
  alignas(4) std::int32_t word = 0;
  std::atomic<bool> stop{false};
  const auto stop_requested = [&] { return stop.load(); };
  const Interrupt interrupt{std::chrono::milliseconds(1), stop_requested};
  std::atomic<Outcome> outcome{Outcome::kPending};
  ThreadGroup threads;
  threads.Start([&] {
    outcome = testing::with_interrupt(&interrupt, [&] { return futex::wait(&word, 0); });
  });
  ASSERT_TRUE(WaitUntil([&] { return futex::queued_count(&word) == 1; }));
  stop = true;
  threads.JoinOrAbort(testing::kWaitLimit);
  EXPECT_EQ(outcome.load(), Outcome::kInterrupted);
  EXPECT_EQ(futex::queued_count(&word), 0u);
}

}  // namespace
}  // namespace parklock
