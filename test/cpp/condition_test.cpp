// ConditionWord with real threads: waits release and re-acquire the mutex, notifications are
// never lost (also against timeouts), and notify_all moves waiters onto a held mutex's queue.
#include "primitives/condition.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "primitives/mutex.h"
#include "test_support.h"

namespace parklock {
namespace {

using testing::kWaitLimit;
using testing::kWaitLimitMs;
using testing::PromiseWait;
using testing::ThreadGroup;
using testing::WaitUntil;
using testing::with_interrupt;

// The thread of the Promise waits below: never a running thread's id.
constexpr ThreadId kPromiseThread = MutexWord::kOwnerLimit - 3;

struct Shared {
  alignas(4) std::int32_t mutex_word = 0;
  alignas(4) std::int32_t condition_word = 0;
  MutexWord mutex() { return MutexWord(&mutex_word); }
  ConditionWord condition() { return ConditionWord(&condition_word); }
};

// A blocking wait of the calling thread, from locking the mutex to unlocking it again.
Outcome LockWaitUnlock(Shared& s, Deadline deadline) {
  const ThreadId me = current_thread_id();
  EXPECT_EQ(s.mutex().lock(me), MutexWord::LockStatus::kAcquired);
  ConditionWord::AwaitStep step(s.condition(), s.mutex(), me);
  const Outcome outcome = wait_blocking(step, deadline);
  EXPECT_EQ(s.mutex().owner_thread(), me);
  EXPECT_EQ(s.mutex().unlock(me), MutexWord::UnlockStatus::kUnlocked);
  return outcome;
}

// A Promise wait of kPromiseThread, started holding the mutex.
struct PromiseAwait {
  explicit PromiseAwait(Shared& s) : step(s.condition(), s.mutex(), kPromiseThread) {
    EXPECT_TRUE(s.mutex().try_lock(kPromiseThread));
    EXPECT_EQ(wait.Start(), Outcome::kPending);
  }
  // Resumes it until it finishes (each wake-up can leave it queued on the mutex again).
  std::optional<Outcome> Finish() {
    std::optional<Outcome> settled;
    while ((settled = wait.Settle()) == Outcome::kPending) {
    }
    return settled;
  }
  ConditionWord::AwaitStep step;
  PromiseWait wait{step, kPromiseThread};
};

TEST(ConditionTest, WaitWithoutHoldingTheMutexIsRefused) {
  Shared s;
  EXPECT_EQ(s.condition().wait(s.mutex(), current_thread_id(), Deadline::after_ms(1)),
            Outcome::kNotOwner);
  ThreadGroup other;
  other.Start([&] { ASSERT_TRUE(s.mutex().try_lock(current_thread_id())); });
  other.JoinOrAbort();
  EXPECT_EQ(s.condition().wait(s.mutex(), current_thread_id(), Deadline::after_ms(1)),
            Outcome::kNotOwner);
}

TEST(ConditionTest, TimedOutWaitReturnsHoldingTheMutexAndLeavesNoWaiter) {
  Shared s;
  const ThreadId self = current_thread_id();
  ASSERT_TRUE(s.mutex().try_lock(self));
  EXPECT_EQ(s.condition().wait(s.mutex(), self, Deadline::after_ms(5)), Outcome::kTimedOut);
  EXPECT_EQ(s.mutex().owner_thread(), self);
  EXPECT_EQ(parking_lot::queued_count(&s.condition_word), 0u);
  EXPECT_EQ(s.condition_word, ConditionWord::kNoWaiters) << "the last waiter out clears the hint";
  EXPECT_EQ(s.mutex().unlock(self), MutexWord::UnlockStatus::kUnlocked);
}

TEST(ConditionTest, WaitReleasesTheMutexWhileWaiting) {
  Shared s;
  std::atomic<bool> notified{false};
  ThreadGroup waiter;
  waiter.Start([&] {
    const ThreadId self = current_thread_id();
    ASSERT_EQ(s.mutex().lock(self), MutexWord::LockStatus::kAcquired);
    while (!notified.load()) {
      ASSERT_NE(s.condition().wait(s.mutex(), self, Deadline::after_ms(kWaitLimit.count())),
                Outcome::kTimedOut);
    }
    EXPECT_EQ(s.mutex().owner_thread(), self);
    EXPECT_EQ(s.mutex().unlock(self), MutexWord::UnlockStatus::kUnlocked);
  });
  ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(&s.condition_word) == 1; }));
  EXPECT_EQ(s.condition_word, ConditionWord::kMayHaveWaiters);
  // The waiter released the mutex, so this does not block.
  const ThreadId self = current_thread_id();
  ASSERT_EQ(s.mutex().lock(self, Deadline::after_ms(kWaitLimit.count())),
            MutexWord::LockStatus::kAcquired);
  notified = true;
  EXPECT_EQ(s.condition().notify_one(), 1u);
  EXPECT_EQ(s.condition_word, ConditionWord::kNoWaiters);
  EXPECT_EQ(s.mutex().unlock(self), MutexWord::UnlockStatus::kUnlocked);
  waiter.JoinOrAbort();
  EXPECT_EQ(s.condition().notify_one(), 0u);
  EXPECT_EQ(s.condition().notify_all(), 0u);
}

TEST(ConditionTest, NotifyAllWhileHoldingTheMutexWakesTheOldestFewAndRequeuesTheRest) {
  Shared s;
  constexpr int kWaiters = 6;
  static_assert(kWaiters > ConditionWord::kWakeFirstOnRequeue);
  std::atomic<bool> go{false};
  std::atomic<int> inside{0};
  std::atomic<int> passed{0};
  std::atomic<int> overlap{0};
  ThreadGroup waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.Start([&] {
      const ThreadId self = current_thread_id();
      ASSERT_EQ(s.mutex().lock(self), MutexWord::LockStatus::kAcquired);
      while (!go.load()) s.condition().wait(s.mutex(), self);
      if (inside.fetch_add(1) != 0) overlap.fetch_add(1);
      inside.fetch_sub(1);
      passed.fetch_add(1);
      EXPECT_EQ(s.mutex().unlock(self), MutexWord::UnlockStatus::kUnlocked);
    });
  }
  ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(&s.condition_word) == kWaiters; }));
  const ThreadId self = current_thread_id();
  ASSERT_EQ(s.mutex().lock(self), MutexWord::LockStatus::kAcquired);
  go = true;
  EXPECT_EQ(s.condition().notify_all(), static_cast<std::size_t>(kWaiters));
  // The rest wait on the mutex, which is marked contended; the oldest few were woken and spin
  // for it, or park on it again once they give up.
  EXPECT_EQ(parking_lot::queued_count(&s.condition_word), 0u);
  EXPECT_GE(parking_lot::queued_count(&s.mutex_word),
            kWaiters - ConditionWord::kWakeFirstOnRequeue);
  EXPECT_LE(parking_lot::queued_count(&s.mutex_word), static_cast<std::size_t>(kWaiters));
  // An atomic read: the woken waiters are reading and trying the word meanwhile.
  EXPECT_EQ(MutexWord::state_of(atomic_ref<std::int32_t>(s.mutex_word).load()),
            MutexWord::kLockedParked);
  EXPECT_EQ(s.mutex().unlock(self), MutexWord::UnlockStatus::kUnlocked);
  waiters.JoinOrAbort();
  EXPECT_EQ(passed.load(), kWaiters);
  EXPECT_EQ(overlap.load(), 0);
  EXPECT_EQ(s.mutex_word, MutexWord::kUnlocked);
  EXPECT_EQ(parking_lot::queued_count(&s.mutex_word), 0u);
}

// A blocked waiter's place in the queues, without its thread: it records the tokens it is woken
// with, so that what notify_all() decides can be checked without racing the woken threads.
class BlockedWaiterStandIn final : public Waiter {
 public:
  BlockedWaiterStandIn(ConditionWord condition, MutexWord mutex)
      : Waiter(current_thread_id(), Clock::now(), condition.request_for(mutex),
               /*blocking=*/true) {}
  ~BlockedWaiterStandIn() override { parking_lot::cancel(*this); }
  void on_unparked(WakeToken token) noexcept override { tokens.push_back(token); }
  std::vector<WakeToken> tokens;  // woken on this thread: notify_all() delivers synchronously
};

TEST(ConditionTest, NotifyAllWithNoMoreWaitersThanItWakesFirstWakesThemAsNotifyOneWould) {
  Shared s;
  const ThreadId self = current_thread_id();
  ASSERT_EQ(s.mutex().lock(self), MutexWord::LockStatus::kAcquired);
  std::vector<std::unique_ptr<BlockedWaiterStandIn>> waiters;
  for (std::size_t i = 0; i < ConditionWord::kWakeFirstOnRequeue; ++i) {
    waiters.push_back(std::make_unique<BlockedWaiterStandIn>(s.condition(), s.mutex()));
    s.condition().enqueue(*waiters.back());
  }
  EXPECT_EQ(s.condition().notify_all(), ConditionWord::kWakeFirstOnRequeue);
  for (const auto& waiter : waiters) {
    EXPECT_EQ(waiter->tokens, std::vector<WakeToken>{ConditionWord::kNotified});
  }
  // Nobody was moved onto the mutex, so it is not marked as having waiters: the unlock below is
  // the plain one.
  EXPECT_EQ(parking_lot::queued_count(&s.mutex_word), 0u);
  EXPECT_EQ(MutexWord::state_of(s.mutex_word), MutexWord::kLocked);
  EXPECT_EQ(s.mutex().unlock(self), MutexWord::UnlockStatus::kUnlocked);
}

TEST(ConditionTest, NotifyAllWithMoreWaitersWakesTheOldestFewAsReleasedAndMovesTheRest) {
  Shared s;
  constexpr std::size_t kMoved = 2;
  const ThreadId self = current_thread_id();
  ASSERT_EQ(s.mutex().lock(self), MutexWord::LockStatus::kAcquired);
  std::vector<std::unique_ptr<BlockedWaiterStandIn>> waiters;
  for (std::size_t i = 0; i < ConditionWord::kWakeFirstOnRequeue + kMoved; ++i) {
    waiters.push_back(std::make_unique<BlockedWaiterStandIn>(s.condition(), s.mutex()));
    s.condition().enqueue(*waiters.back());
  }
  EXPECT_EQ(s.condition().notify_all(), ConditionWord::kWakeFirstOnRequeue + kMoved);
  for (std::size_t i = 0; i < waiters.size(); ++i) {
    const std::vector<WakeToken> expected =
        i < ConditionWord::kWakeFirstOnRequeue
            ? std::vector<WakeToken>{MutexWord::kReleasedWithMoreWaiters}
            : std::vector<WakeToken>{};
    EXPECT_EQ(waiters[i]->tokens, expected) << "waiter " << i;
  }
  EXPECT_EQ(parking_lot::queued_count(&s.mutex_word), kMoved);
  EXPECT_EQ(MutexWord::state_of(s.mutex_word), MutexWord::kLockedParked);
  // The unlock wakes the oldest of those moved (or hands it the mutex, if fairness is due).
  EXPECT_EQ(s.mutex().unlock(self), MutexWord::UnlockStatus::kUnlocked);
  EXPECT_EQ(waiters[ConditionWord::kWakeFirstOnRequeue]->tokens.size(), 1u);
  EXPECT_EQ(parking_lot::queued_count(&s.mutex_word), kMoved - 1);
  s.mutex_word = MutexWord::kUnlocked;  // nobody runs to take what the stand-in was handed
}

// One AwaitStep, run as a Promise wait and blocking, with real threads: each releases the mutex
// while queued on the condition, and finishes holding it again.
TEST(ConditionTest, OneAwaitStepServesAPromiseWaitAndABlockingWait) {
  Shared s;
  PromiseAwait promise(s);
  EXPECT_EQ(s.mutex_word, MutexWord::kUnlocked) << "queued, then released";
  std::atomic<Outcome> blocking{Outcome::kPending};
  ThreadGroup blocked;
  blocked.Start([&] { blocking = LockWaitUnlock(s, Deadline::after_ms(kWaitLimitMs)); });
  ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(&s.condition_word) == 2; }));
  const ThreadId self = current_thread_id();
  ASSERT_EQ(s.mutex().lock(self), MutexWord::LockStatus::kAcquired);
  // The oldest, the Promise wait, is notified and queues on the held mutex to re-lock it.
  EXPECT_EQ(s.condition().notify_one(), 1u);
  ASSERT_EQ(promise.wait.Settle(), Outcome::kPending);
  EXPECT_EQ(parking_lot::queued_count(&s.mutex_word), 1u);
  EXPECT_EQ(s.mutex().unlock(self), MutexWord::UnlockStatus::kUnlocked);
  ASSERT_EQ(promise.wait.Settle(), Outcome::kAcquired);
  EXPECT_EQ(s.mutex().owner_thread(), kPromiseThread);
  // The blocked waiter, notified while the Promise wait holds the mutex, re-locks once it is
  // released.
  EXPECT_EQ(s.condition().notify_one(), 1u);
  EXPECT_EQ(blocking.load(), Outcome::kPending);
  EXPECT_EQ(s.mutex().unlock(kPromiseThread), MutexWord::UnlockStatus::kUnlocked);
  blocked.JoinOrAbort();
  EXPECT_EQ(blocking.load(), Outcome::kAcquired);
  EXPECT_EQ(s.mutex_word, MutexWord::kUnlocked);
  EXPECT_EQ(s.condition_word, ConditionWord::kNoWaiters);
}

// notify_all() with the mutex held moves the blocked waiters beyond the first few onto the
// mutex's queue; a Promise waiter it wakes to compete queues there itself, behind them. Each
// finishes holding the mutex in turn.
TEST(ConditionTest, NotifyAllPutsAPromiseWaiterOnTheMutexBesideTheMovedBlockedWaiters) {
  Shared s;
  constexpr int kBlocked = static_cast<int>(ConditionWord::kWakeFirstOnRequeue) + 2;
  std::atomic<bool> go{false};
  std::atomic<int> passed{0};
  ThreadGroup waiters;
  for (int i = 0; i < kBlocked; ++i) {
    waiters.Start([&] {
      const ThreadId me = current_thread_id();
      ASSERT_EQ(s.mutex().lock(me), MutexWord::LockStatus::kAcquired);
      while (!go.load()) {
        ConditionWord::AwaitStep step(s.condition(), s.mutex(), me);
        ASSERT_EQ(wait_blocking(step, Deadline::after_ms(kWaitLimitMs)), Outcome::kAcquired);
      }
      passed.fetch_add(1);
      EXPECT_EQ(s.mutex().unlock(me), MutexWord::UnlockStatus::kUnlocked);
    });
  }
  ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(&s.condition_word) == kBlocked; }));
  PromiseAwait promise(s);
  const ThreadId self = current_thread_id();
  ASSERT_EQ(s.mutex().lock(self), MutexWord::LockStatus::kAcquired);
  go = true;
  EXPECT_EQ(s.condition().notify_all(), static_cast<std::size_t>(kBlocked + 1));
  EXPECT_EQ(parking_lot::queued_count(&s.condition_word), 0u);
  ASSERT_EQ(promise.wait.Settle(), Outcome::kPending);
  EXPECT_EQ(promise.wait.waiter().address(), s.mutex().address());
  EXPECT_EQ(s.mutex().unlock(self), MutexWord::UnlockStatus::kUnlocked);
  // Every blocked waiter passes; the Promise wait's turn comes among them.
  ASSERT_EQ(promise.Finish(), Outcome::kAcquired);
  EXPECT_EQ(s.mutex().owner_thread(), kPromiseThread);
  EXPECT_EQ(s.mutex().unlock(kPromiseThread), MutexWord::UnlockStatus::kUnlocked);
  waiters.JoinOrAbort();
  EXPECT_EQ(passed.load(), kBlocked);
  EXPECT_EQ(s.mutex_word, MutexWord::kUnlocked);
  EXPECT_EQ(parking_lot::queued_count(&s.mutex_word), 0u);
}

// A cancelled or timed-out wait still re-locks its mutex before it finishes: a Promise wait
// reports kCancelled, a blocking one kTimedOut. Cancelled once on the mutex's queue, the wait had
// been notified and reports so.
TEST(ConditionTest, CancelledAndTimedOutWaitsReportSoOnlyOnceTheyHoldTheMutexAgain) {
  Shared s;
  const ThreadId self = current_thread_id();
  PromiseAwait cancelled(s);
  const Clock::time_point until = Clock::now() + std::chrono::milliseconds(200);
  std::atomic<Outcome> timed_out{Outcome::kPending};
  ThreadGroup blocked;
  blocked.Start([&] { timed_out = LockWaitUnlock(s, Deadline::at(until)); });
  ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(&s.condition_word) == 2; }));
  ASSERT_EQ(s.mutex().lock(self), MutexWord::LockStatus::kAcquired);
  // Cancelled while queued on the condition: it queues on the held mutex to re-lock.
  EXPECT_EQ(cancelled.wait.Cancel(), Outcome::kPending);
  EXPECT_EQ(cancelled.wait.waiter().address(), s.mutex().address());
  if (Clock::now() < until) {
    // The blocked waiter's deadline passes while this thread holds the mutex: it waits for it.
    EXPECT_TRUE(WaitUntil([&] { return parking_lot::queued_count(&s.mutex_word) == 2; }));
    EXPECT_EQ(timed_out.load(), Outcome::kPending);
  }
  EXPECT_EQ(s.condition_word, ConditionWord::kNoWaiters) << "the last waiter out clears the hint";
  EXPECT_EQ(s.mutex().unlock(self), MutexWord::UnlockStatus::kUnlocked);
  ASSERT_EQ(cancelled.Finish(), Outcome::kCancelled);
  EXPECT_EQ(s.mutex().owner_thread(), kPromiseThread);
  EXPECT_EQ(s.mutex().unlock(kPromiseThread), MutexWord::UnlockStatus::kUnlocked);
  blocked.JoinOrAbort();
  EXPECT_EQ(timed_out.load(), Outcome::kTimedOut);

  // Cancelled on the mutex's queue, once notified: only its place there is lost.
  PromiseAwait notified(s);
  ASSERT_EQ(s.mutex().lock(self), MutexWord::LockStatus::kAcquired);
  EXPECT_EQ(s.condition().notify_one(), 1u);
  ASSERT_EQ(notified.wait.Settle(), Outcome::kPending);
  EXPECT_EQ(notified.wait.Cancel(), Outcome::kPending);
  EXPECT_EQ(s.mutex().unlock(self), MutexWord::UnlockStatus::kUnlocked);
  ASSERT_EQ(notified.wait.Settle(), Outcome::kAcquired);
  EXPECT_EQ(s.mutex().unlock(kPromiseThread), MutexWord::UnlockStatus::kUnlocked);
  EXPECT_EQ(s.mutex_word, MutexWord::kUnlocked);
  EXPECT_EQ(parking_lot::queued_count(&s.mutex_word), 0u);
}

TEST(ConditionTest, NotifyAllWithTheMutexFreeWakesEveryWaiter) {
  Shared s;
  constexpr int kWaiters = 4;
  std::atomic<bool> go{false};
  std::atomic<int> passed{0};
  ThreadGroup waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.Start([&] {
      const ThreadId self = current_thread_id();
      ASSERT_EQ(s.mutex().lock(self), MutexWord::LockStatus::kAcquired);
      while (!go.load()) s.condition().wait(s.mutex(), self);
      passed.fetch_add(1);
      EXPECT_EQ(s.mutex().unlock(self), MutexWord::UnlockStatus::kUnlocked);
    });
  }
  ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(&s.condition_word) == kWaiters; }));
  go = true;
  EXPECT_EQ(s.condition().notify_all(), static_cast<std::size_t>(kWaiters));
  waiters.JoinOrAbort();
  EXPECT_EQ(passed.load(), kWaiters);
  EXPECT_EQ(s.mutex_word, MutexWord::kUnlocked);
}

// A bounded queue: producers and consumers with short timeouts (so timeouts race with
// notifications all the time). Every item is consumed exactly once and nobody is left waiting.
TEST(ConditionTest, BoundedQueueUnderTimeoutsLosesNoNotification) {
  Shared s;
  alignas(4) std::int32_t not_full_word = 0;
  ConditionWord not_full(&not_full_word);
  constexpr int kCapacity = 3;
  constexpr int kProducers = 2;
  constexpr int kConsumers = 3;
  constexpr int kItemsPerProducer = 3000;
  int queued = 0;              // guarded by the mutex
  long long consumed_sum = 0;  // guarded by the mutex
  int consumed = 0;            // guarded by the mutex
  ThreadGroup threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.Start([&] {
      const ThreadId self = current_thread_id();
      for (int i = 1; i <= kItemsPerProducer; ++i) {
        ASSERT_EQ(s.mutex().lock(self), MutexWord::LockStatus::kAcquired);
        while (queued == kCapacity) not_full.wait(s.mutex(), self, Deadline::after_ms(0.05));
        ++queued;
        consumed_sum += i;
        s.condition().notify_one();
        ASSERT_EQ(s.mutex().unlock(self), MutexWord::UnlockStatus::kUnlocked);
      }
    });
  }
  constexpr int kTotal = kProducers * kItemsPerProducer;
  for (int c = 0; c < kConsumers; ++c) {
    threads.Start([&] {
      const ThreadId self = current_thread_id();
      for (;;) {
        ASSERT_EQ(s.mutex().lock(self), MutexWord::LockStatus::kAcquired);
        while (queued == 0 && consumed < kTotal) {
          s.condition().wait(s.mutex(), self, Deadline::after_ms(0.05));
        }
        if (consumed == kTotal) {
          ASSERT_EQ(s.mutex().unlock(self), MutexWord::UnlockStatus::kUnlocked);
          return;
        }
        --queued;
        if (++consumed == kTotal) s.condition().notify_all();  // release the other consumers
        not_full.notify_one();
        ASSERT_EQ(s.mutex().unlock(self), MutexWord::UnlockStatus::kUnlocked);
      }
    });
  }
  threads.JoinOrAbort();
  EXPECT_EQ(consumed, kTotal);
  EXPECT_EQ(queued, 0);
  EXPECT_EQ(consumed_sum, kProducers * (kItemsPerProducer * (kItemsPerProducer + 1LL) / 2));
  EXPECT_EQ(parking_lot::queued_count(&s.condition_word), 0u);
  EXPECT_EQ(parking_lot::queued_count(&not_full_word), 0u);
  EXPECT_EQ(s.mutex_word, MutexWord::kUnlocked);
}

TEST(ConditionTest, InterruptedWaitLeavesTheQueueWithoutTheMutex) {
  Shared s;
  std::atomic<bool> stop{false};
  auto requested = [&] { return stop.load(); };
  const Interrupt interrupt{std::chrono::milliseconds(1), requested};
  ThreadGroup waiter;
  waiter.Start([&] {
    const ThreadId self = current_thread_id();
    ASSERT_EQ(s.mutex().lock(self), MutexWord::LockStatus::kAcquired);
    EXPECT_EQ(
        with_interrupt(&interrupt,
                       [&] { return s.condition().wait(s.mutex(), self, Deadline::never()); }),
        Outcome::kInterrupted);
  });
  ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(&s.condition_word) == 1; }));
  stop = true;
  waiter.JoinOrAbort();
  EXPECT_EQ(parking_lot::queued_count(&s.condition_word), 0u);
  EXPECT_EQ(s.mutex_word, MutexWord::kUnlocked);
}

}  // namespace
}  // namespace parklock
