// The relay of cross_process.h within one process: what another process's release, count-down or
// finish leaves behind (the word changed behind this process's lot, and the kernel futex woken by
// its wake_others(), or, in the second run of each test, not woken) reaches the waiters here
// through the relay thread and each primitive's WaitSite::look_again. Real processes are in
// test/shared_region.test.js. Native x86-64 Linux only, as shared_region_test.cpp.
#include "cross_process.h"

#include <gtest/gtest.h>

#if defined(__linux__) && defined(__x86_64__)
#include <atomic>
#include <condition_variable>
#include <mutex>

#include "futex.h"
#include "latch.h"
#include "once.h"
#include "semaphore.h"
#include "temporary_region.h"
#include "test_support.h"

namespace parklock {
namespace {

using testing::kHangGuardMs;
using testing::TemporaryRegion;
using testing::ThreadGroup;
using testing::WaitUntil;

// The parameter: whether the other process woke the kernel futex on the word. Without a wake-up
// the relay still finds the word changed when its poll interval ends.
class CrossProcessTest : public ::testing::TestWithParam<bool> {
 protected:
  // What another process's change of `word` to `value` leaves in this process.
  void change_elsewhere(std::int32_t* word, std::int32_t value, const void* key) const {
    atomic_ref<std::int32_t>(*word).store(value, std::memory_order_release);
    if (GetParam()) cross_process::wake_others(key);
  }
};

TEST_P(CrossProcessTest, PermitsReleasedElsewhereReachABlockedAcquire) {
  TemporaryRegion region;
  ASSERT_NE(region.opened.region, nullptr);
  std::int32_t* word = region.opened.words;
  SemaphoreWord semaphore(word);
  std::atomic<Outcome> outcome{Outcome::kPending};
  ThreadGroup threads;
  threads.Start([&] { outcome = semaphore.acquire(2, Deadline::after_ms(kHangGuardMs)); });
  ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(word) == 1; }));
  // The waiter marked the word; the other process adds its permits beside the mark.
  const std::int32_t marked = atomic_ref<std::int32_t>(*word).load(std::memory_order_relaxed);
  ASSERT_TRUE(SemaphoreWord::has_waiters(marked));
  change_elsewhere(word, marked + 3, word);
  threads.JoinOrAbort();
  EXPECT_EQ(outcome, Outcome::kAcquired);
  EXPECT_EQ(semaphore.available(), 1);
  // Other processes may still wait: the mark stays, and no fair turn set permits aside.
  const std::int32_t after = atomic_ref<std::int32_t>(*word).load(std::memory_order_relaxed);
  EXPECT_TRUE(SemaphoreWord::has_waiters(after));
  EXPECT_FALSE(SemaphoreWord::hands_off(after));
}

TEST_P(CrossProcessTest, ACountDownElsewhereThatOpensALatchReleasesEveryWaiter) {
  TemporaryRegion region;
  ASSERT_NE(region.opened.region, nullptr);
  std::int32_t* word = region.opened.words;
  LatchWord latch(word);
  latch.init(1);
  std::atomic<int> released{0};
  ThreadGroup threads;
  for (int i = 0; i < 3; ++i) {
    threads.Start([&] {
      if (latch.wait(Deadline::after_ms(kHangGuardMs)) == Outcome::kAcquired) ++released;
    });
  }
  ASSERT_TRUE(WaitUntil([&] { return futex::queued_count(word) == 3; }));
  change_elsewhere(word, 0, futex::key(word));
  // Well before their deadline, at which a waiter would find the latch open by itself.
  EXPECT_TRUE(WaitUntil([&] { return released == 3; }));
  threads.JoinOrAbort();
}

TEST_P(CrossProcessTest, ARunFinishedElsewhereReleasesTheOncesWaiter) {
  TemporaryRegion region;
  ASSERT_NE(region.opened.region, nullptr);
  std::int32_t* word = region.opened.words;
  OnceWord once(word);
  // The runner: a live thread with an identity in the region, standing for another process's.
  std::mutex lock;
  std::condition_variable done;
  bool finished = false;
  std::atomic<ThreadId> runner{kNoThread};
  ThreadGroup threads;
  threads.Start([&] {
    runner = shared_region::identity_at(word, current_thread_id());
    std::unique_lock<std::mutex> guard(lock);
    done.wait(guard, [&] { return finished; });
  });
  ASSERT_TRUE(WaitUntil([&] { return runner != kNoThread; }));
  atomic_ref<std::int32_t>(*word).store(OnceWord::run_by(runner, OnceWord::kRunning));
  std::atomic<Outcome> outcome{Outcome::kPending};
  threads.Start([&] {
    const ThreadId self = shared_region::identity_at(word, current_thread_id());
    outcome = once.begin(self, Deadline::after_ms(kHangGuardMs));
  });
  ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(word) == 1; }));
  change_elsewhere(word, OnceWord::kDone, word);
  ASSERT_TRUE(WaitUntil([&] { return outcome != Outcome::kPending; }));
  EXPECT_EQ(outcome, Outcome::kAcquired);
  {
    const std::lock_guard<std::mutex> guard(lock);
    finished = true;
  }
  done.notify_all();
  threads.JoinOrAbort();
}

INSTANTIATE_TEST_SUITE_P(WokenOrNot, CrossProcessTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Woken" : "NotWoken";
                         });

TEST(CrossProcessKeyTest, AKeyWaitsOnTheWordThatHoldsIt) {
  alignas(4) std::int32_t words[2] = {0, 0};
  EXPECT_EQ(cross_process::word_of(&words[1]), &words[1]);
  EXPECT_EQ(cross_process::word_of(futex::key(&words[1])), &words[1]);
}

}  // namespace
}  // namespace parklock

#endif
