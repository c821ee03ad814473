// futex::wait / notify with real threads.
#include "futex.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>

#include "atomic_ref.h"
#include "test_support.h"

namespace parklock {
namespace {

using testing::kWaitLimitMs;
using testing::RecordingWaiter;
using testing::ThreadGroup;
using testing::WaitUntil;

TEST(FutexTest, WaitReturnsAtOnceWhenTheValueDiffers) {
  alignas(4) std::int32_t word = 1;
  EXPECT_EQ(futex::wait(&word, 0, Deadline::never()), futex::WaitStatus::kNotEqual);
  EXPECT_EQ(futex::queued_count(&word), 0u);
}

TEST(FutexTest, WaitTimesOutAndLeavesTheQueue) {
  alignas(4) std::int32_t word = 0;
  EXPECT_EQ(futex::wait(&word, 0, Deadline::after_ms(2)), futex::WaitStatus::kTimedOut);
  EXPECT_EQ(futex::queued_count(&word), 0u);
}

TEST(FutexTest, NotifyWakesAtMostCountWaitersOldestFirst) {
  alignas(4) std::int32_t word = 0;
  constexpr int kWaiters = 4;
  std::atomic<int> woken{0};
  ThreadGroup waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.Start([&] {
      EXPECT_EQ(futex::wait(&word, 0, Deadline::after_ms(kWaitLimitMs)), futex::WaitStatus::kWoken);
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

}  // namespace
}  // namespace parklock
