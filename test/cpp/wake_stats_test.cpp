// Tests of the per-thread wake-up counters (wake_stats.h) that the benchmarks report: each
// outcome of a blocked mutex wait's wake-up is counted once, on the thread that was woken.
#include "primitives/wake_stats.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>

#include "primitives/mutex.h"
#include "test_support.h"

namespace parklock {
namespace {

using parking_lot::FairnessForTesting;
using testing::FairnessOverride;
using testing::kHangGuardMs;
using testing::ThreadGroup;
using testing::WaitUntil;
using LockStatus = MutexWord::LockStatus;
using UnlockStatus = MutexWord::UnlockStatus;

wake_stats::Counts since(const wake_stats::Counts& before) {
  const wake_stats::Counts now = wake_stats::snapshot();
  return {now.woken - before.woken, now.futile - before.futile, now.handed_off - before.handed_off};
}

class WakeStatsTest : public ::testing::Test {
 protected:
  std::size_t queued() { return parking_lot::queued_count(word_.address()); }

  // Runs `holder_releases` on this thread once another thread is parked on the mutex (which this
  // thread holds), and returns how that thread's wait was counted.
  template <typename Release>
  wake_stats::Counts CountsOfOneParkedWaiter(Release holder_releases) {
    EXPECT_EQ(word_.lock(self_), LockStatus::kAcquired);
    wake_stats::Counts counted;
    ThreadGroup threads;
    threads.Start([&] {
      const ThreadId me = current_thread_id();
      const wake_stats::Counts before = wake_stats::snapshot();
      EXPECT_EQ(word_.lock(me, Deadline::after_ms(kHangGuardMs)), LockStatus::kAcquired);
      counted = since(before);
      EXPECT_EQ(word_.unlock(me), UnlockStatus::kUnlocked);
    });
    EXPECT_TRUE(WaitUntil([&] { return queued() == 1; }));
    holder_releases();
    threads.JoinOrAbort();
    return counted;
  }

  alignas(MutexWord::kAlign) std::int32_t words_[MutexWord::kWordCount] = {};
  MutexWord word_{words_};
  const ThreadId self_ = current_thread_id();
};

TEST_F(WakeStatsTest, AWaiterHandedTheMutexCountsAHandOffAndNoCompetition) {
  const FairnessOverride fair(FairnessForTesting::kAlways);
  const wake_stats::Counts here = wake_stats::snapshot();
  const wake_stats::Counts counted =
      CountsOfOneParkedWaiter([&] { EXPECT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked); });
  EXPECT_EQ(counted.handed_off, 1u);
  EXPECT_EQ(counted.woken, 0u);
  EXPECT_EQ(counted.futile, 0u);
  const wake_stats::Counts unlocker = since(here);
  EXPECT_EQ(unlocker.woken + unlocker.futile + unlocker.handed_off, 0u)
      << "the thread that wakes another counts nothing";
}

TEST_F(WakeStatsTest, AWaiterWokenToAFreeMutexCountsOneWakeUpThatWasNotFutile) {
  const FairnessOverride fair(FairnessForTesting::kNever);
  const wake_stats::Counts counted =
      CountsOfOneParkedWaiter([&] { EXPECT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked); });
  EXPECT_EQ(counted.woken, 1u);
  EXPECT_EQ(counted.futile, 0u);
  EXPECT_EQ(counted.handed_off, 0u);
}

TEST_F(WakeStatsTest, EveryWakeUpEndsInAnAcquisitionOrAFutilePark) {
  // The holder re-takes the mutex right after the unlock that woke the waiter, so the waiter
  // usually finds it taken and parks again (a futile wake-up) until the final release; whichever
  // way the race goes, each of its wake-ups but the last was futile.
  const FairnessOverride fair(FairnessForTesting::kNever);
  const wake_stats::Counts counted = CountsOfOneParkedWaiter([&] {
    for (int i = 0; i < 20; ++i) {
      EXPECT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);
      if (word_.lock(self_, Deadline::after_ms(kHangGuardMs)) != LockStatus::kAcquired) return;
      // Give the waiter time to park again, if it lost the race.
      WaitUntil([&] { return queued() == 1; }, std::chrono::milliseconds(20));
    }
    EXPECT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);
  });
  EXPECT_GE(counted.woken, 1u);
  EXPECT_EQ(counted.woken, counted.futile + 1);
  EXPECT_EQ(counted.handed_off, 0u);
}

}  // namespace
}  // namespace parklock
