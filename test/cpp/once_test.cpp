// OnceWord: one runner at a time, waiters released by a completed run, a failed run left to the
// next caller, and a run whose thread ended handed on with the report; the one BeginStep run both
// blocking (wait_blocking) and as a Promise wait (PromiseWait), with real threads.
#include "primitives/once.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>

#include "lot/owner_death.h"
#include "lot/parking_lot.h"
#include "lot/thread_id.h"
#include "test_support.h"

namespace parklock {
namespace {

using testing::kHangGuardMs;
using testing::PromiseWait;
using testing::RunOnEndingThread;
using testing::ThreadGroup;
using testing::WaitUntil;

// The thread of Promise waits that no real thread runs (never ended).
constexpr ThreadId kAsyncA = (ThreadId{1} << 29) - 2;

Deadline HangGuard() {
  return Deadline::after_ms(kHangGuardMs);
}

class OnceWordTest : public ::testing::Test {
 protected:
  std::int32_t raw() const { return atomic_ref<const std::int32_t>(word_).load(); }
  std::size_t queued() const { return parking_lot::queued_count(&word_); }
  OnceWord once() { return OnceWord(&word_); }

  alignas(OnceWord::kAlign) std::int32_t word_ = OnceWord::kNotDone;
  const ThreadId self_ = current_thread_id();
};

TEST_F(OnceWordTest, TheFirstBeginRunsAndACompletedRunIsDoneForGood) {
  ASSERT_EQ(once().begin(self_), Outcome::kLeader);
  EXPECT_EQ(raw(), OnceWord::run_by(self_, OnceWord::kRunning));
  EXPECT_EQ(once().runner(), self_);
  EXPECT_FALSE(once().is_done());
  EXPECT_EQ(once().finish(self_, true), OnceWord::FinishStatus::kFinished);
  EXPECT_EQ(raw(), OnceWord::kDone);
  EXPECT_TRUE(once().is_done());
  EXPECT_EQ(once().begin(self_), Outcome::kAcquired);
  EXPECT_EQ(once().finish(self_, true), OnceWord::FinishStatus::kNotRunner);
}

TEST_F(OnceWordTest, AFailedRunLeavesItNotDone) {
  ASSERT_EQ(once().begin(self_), Outcome::kLeader);
  EXPECT_EQ(once().finish(self_, false), OnceWord::FinishStatus::kFinished);
  EXPECT_EQ(raw(), OnceWord::kNotDone);
  EXPECT_EQ(once().begin(self_), Outcome::kLeader);
  EXPECT_EQ(once().finish(self_, true), OnceWord::FinishStatus::kFinished);
}

TEST_F(OnceWordTest, OnlyTheRunnerFinishes) {
  ASSERT_EQ(once().begin(self_), Outcome::kLeader);
  EXPECT_EQ(once().finish(kAsyncA, true), OnceWord::FinishStatus::kNotRunner);
  EXPECT_EQ(once().runner(), self_);
  EXPECT_EQ(once().finish(self_, true), OnceWord::FinishStatus::kFinished);
}

TEST_F(OnceWordTest, TheRunnersBlockingBeginIsRefusedAndItsPromiseBeginWaits) {
  ASSERT_EQ(once().begin(self_), Outcome::kLeader);
  EXPECT_EQ(once().begin(self_, HangGuard()), Outcome::kAlreadyHeld);
  OnceWord::BeginStep step(once(), self_);
  PromiseWait promise(step, self_);
  ASSERT_EQ(promise.Start(), Outcome::kPending);
  EXPECT_EQ(OnceWord::state_of(raw()), OnceWord::kRunningParked);
  ASSERT_EQ(once().finish(self_, true), OnceWord::FinishStatus::kFinished);
  EXPECT_EQ(promise.Settle(), Outcome::kAcquired);
  EXPECT_EQ(queued(), 0U);
}

TEST_F(OnceWordTest, ACorruptWordIsReported) {
  const std::int32_t words[] = {OnceWord::kRunning, OnceWord::kRunningParked,
                                OnceWord::run_by(self_, OnceWord::kDone)};
  for (const std::int32_t corrupt : words) {
    word_ = corrupt;
    EXPECT_EQ(once().begin(kAsyncA, HangGuard()), Outcome::kCorrupt) << corrupt;
    EXPECT_EQ(once().finish(self_, true), OnceWord::FinishStatus::kCorrupt) << corrupt;
  }
  word_ = OnceWord::kNotDone;
}

TEST_F(OnceWordTest, ACompletedRunReleasesEveryBlockingWaiter) {
  ASSERT_EQ(once().begin(self_), Outcome::kLeader);
  constexpr int kWaiters = 4;
  std::atomic<int> done{0};
  ThreadGroup waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.Start([&] {
      if (once().begin(current_thread_id(), HangGuard()) == Outcome::kAcquired) ++done;
    });
  }
  ASSERT_TRUE(WaitUntil([&] { return queued() == kWaiters; }));
  EXPECT_EQ(OnceWord::state_of(raw()), OnceWord::kRunningParked);
  ASSERT_EQ(once().finish(self_, true), OnceWord::FinishStatus::kFinished);
  waiters.JoinOrAbort();
  EXPECT_EQ(done.load(), kWaiters);
  EXPECT_EQ(raw(), OnceWord::kDone);
  EXPECT_EQ(queued(), 0U);
}

TEST_F(OnceWordTest, AFailedRunWakesAPromiseWaiterToRunItself) {
  ASSERT_EQ(once().begin(self_), Outcome::kLeader);
  OnceWord::BeginStep step(once(), kAsyncA);
  PromiseWait promise(step, kAsyncA);
  ASSERT_EQ(promise.Start(), Outcome::kPending);
  ASSERT_EQ(once().finish(self_, false), OnceWord::FinishStatus::kFinished);
  ASSERT_EQ(promise.Settle(), Outcome::kLeader);
  EXPECT_EQ(once().runner(), kAsyncA);
  EXPECT_EQ(step.ended_owner(), kNoThread);
  ASSERT_EQ(once().finish(kAsyncA, true), OnceWord::FinishStatus::kFinished);
  EXPECT_EQ(raw(), OnceWord::kDone);
}

TEST_F(OnceWordTest, OneBeginStepServesAPromiseWaitAndABlockingWait) {
  ASSERT_EQ(once().begin(self_), Outcome::kLeader);
  testing::PromiseStep<OnceWord::BeginStep> promise(testing::OnThread{kAsyncA}, once(), kAsyncA);
  ASSERT_EQ(promise.Start(), Outcome::kPending);
  std::atomic<Outcome> blocking{Outcome::kPending};
  std::thread blocked([&] {
    OnceWord::BeginStep step(once(), current_thread_id());
    blocking = wait_blocking(step, HangGuard());
  });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 2; }));
  ASSERT_EQ(once().finish(self_, true), OnceWord::FinishStatus::kFinished);
  EXPECT_EQ(promise.Settle(), Outcome::kAcquired);
  blocked.join();
  EXPECT_EQ(blocking.load(), Outcome::kAcquired);
  EXPECT_EQ(queued(), 0U);
}

// Threads race begin() against initializers that fail `failures` times: at most one runs at any
// instant, every failure is retried, and everybody returns once one run completed.
TEST_F(OnceWordTest, ExactlyOneRunnerAtATimeUntilARunCompletes) {
  constexpr int kThreads = 6;
  constexpr int kFailures = 3;
  std::atomic<int> running{0};
  std::atomic<int> runs{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> returned{0};
  ThreadGroup threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.Start([&] {
      const ThreadId me = current_thread_id();
      for (;;) {
        const Outcome outcome = once().begin(me, HangGuard());
        if (outcome == Outcome::kAcquired) break;
        ASSERT_EQ(outcome, Outcome::kLeader);
        if (running.fetch_add(1) != 0) ++overlaps;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        const bool success = runs.fetch_add(1) >= kFailures;
        running.fetch_sub(1);
        ASSERT_EQ(once().finish(me, success), OnceWord::FinishStatus::kFinished);
        if (success) break;
      }
      ++returned;
    });
  }
  threads.JoinOrAbort();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(runs.load(), kFailures + 1);
  EXPECT_EQ(returned.load(), kThreads);
  EXPECT_EQ(raw(), OnceWord::kDone);
}

TEST_F(OnceWordTest, TheNextBeginTakesOverARunWhoseThreadEndedAndReportsIt) {
  const ThreadId ended =
      RunOnEndingThread([&] { ASSERT_EQ(once().begin(current_thread_id()), Outcome::kLeader); });
  EXPECT_EQ(once().runner(), ended) << "not silently reset";
  ThreadId reported = kNoThread;
  ASSERT_EQ(once().begin(self_, HangGuard(), &reported), Outcome::kOwnerDied);
  EXPECT_EQ(reported, ended);
  EXPECT_EQ(once().runner(), self_);
  ASSERT_EQ(once().finish(self_, true), OnceWord::FinishStatus::kFinished);
  EXPECT_EQ(raw(), OnceWord::kDone);
}

// The end of the runner's thread makes the oldest waiter the runner, with the report; a Promise
// waiter that gives that hand-off away passes run and report on to the next one.
TEST_F(OnceWordTest, TheEndOfTheRunnersThreadHandsTheRunOnWithTheReport) {
  std::atomic<bool> release{false};
  std::atomic<ThreadId> runner{kNoThread};
  std::thread holder([&] {
    runner = current_thread_id();
    ASSERT_EQ(once().begin(current_thread_id()), Outcome::kLeader);
    while (!release) std::this_thread::yield();
  });
  ASSERT_TRUE(WaitUntil([&] { return once().runner() != kNoThread; }));

  testing::PromiseStep<OnceWord::BeginStep> promise(testing::OnThread{kAsyncA}, once(), kAsyncA);
  ASSERT_EQ(promise.Start(), Outcome::kPending);
  std::atomic<Outcome> blocking{Outcome::kPending};
  std::atomic<ThreadId> reported{kNoThread};
  ThreadGroup waiters;
  waiters.Start([&] {
    const ThreadId me = current_thread_id();
    ThreadId ended = kNoThread;
    blocking = once().begin(me, HangGuard(), &ended);
    reported = ended;
    if (blocking == Outcome::kOwnerDied) once().finish(me, true);
  });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 2; }));
  release = true;
  holder
      .join();  // the runner's thread ends: the oldest waiter, the Promise wait, is handed the run
  ASSERT_TRUE(promise.waiter().WaitForWakes(1));
  EXPECT_EQ(once().runner(), kAsyncA);
  EXPECT_EQ(blocking.load(), Outcome::kPending);
  // Its abort comes too late to take it out: it gives the run back, and the report goes on.
  EXPECT_EQ(promise.Cancel(), Outcome::kCancelled);
  waiters.JoinOrAbort();
  EXPECT_EQ(blocking.load(), Outcome::kOwnerDied);
  EXPECT_EQ(reported.load(), runner.load());
  EXPECT_EQ(raw(), OnceWord::kDone);
  EXPECT_EQ(queued(), 0U);
}

}  // namespace
}  // namespace parklock
