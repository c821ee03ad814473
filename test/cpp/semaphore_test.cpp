// Tests of the counting semaphore (semaphore.h) with real threads: the layout, bad counts and
// corrupt words, FIFO hand-offs on fair turns and wake-ups to compete (barging) otherwise, both
// pinned with FairnessOverride, no starvation of large requests, waiters that leave the head of
// the queue, abandoned grants, and stress runs under every policy checking that no more permits
// are ever in use than exist, that no wake-up is lost and that timeouts and interrupts leak none;
// many blocking threads over few permits (waiters spin before they queue), and a stopped waiter
// leaving promptly from the spin or the queue.
#include "primitives/semaphore.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "lot/atomic_ref.h"
#include "test_support.h"

namespace parklock {
namespace {

using namespace std::chrono_literals;
using testing::FairnessOverride;
using testing::kWaitLimit;
using testing::PromiseWait;
using testing::ThreadGroup;
using testing::WaitUntil;
using testing::with_interrupt;
using ReleaseStatus = SemaphoreWord::ReleaseStatus;

// A deadline for acquires that should succeed: a lost wake-up then ends as kTimedOut, a readable
// failure, instead of hanging the suite.
Deadline HangGuard() {
  return Deadline::after_ms(20'000);
}

// An asynchronous waiter asking for `request` permits that records the tokens it is woken with.
class PermitWaiter final : public Waiter {
 public:
  explicit PermitWaiter(std::int64_t request)
      : Waiter(current_thread_id(), Clock::now(), request) {}
  // A failed ASSERT could leave it queued in the process-wide lot; remove it and say so.
  ~PermitWaiter() override {
    if (parking_lot::cancel(*this)) ADD_FAILURE() << "a PermitWaiter was destroyed while queued";
  }

  std::vector<WakeToken> tokens() const {
    std::lock_guard<std::mutex> guard(lock_);
    return tokens_;
  }
  bool granted() const {
    const std::vector<WakeToken> seen = tokens();
    return seen.size() == 1 && seen[0] == SemaphoreWord::kGranted;
  }

 private:
  void on_unparked(WakeToken token) noexcept override {
    std::lock_guard<std::mutex> guard(lock_);
    tokens_.push_back(token);
  }

  mutable std::mutex lock_;
  std::vector<WakeToken> tokens_;  // guarded by lock_
};

// Two Promise waits for one permit each, queued in this order.
struct TwoQueuedWaits {
  explicit TwoQueuedWaits(SemaphoreWord sem) : first_step(sem, 1), second_step(sem, 1) {
    EXPECT_EQ(first.Start(), Outcome::kPending);
    EXPECT_EQ(second.Start(), Outcome::kPending);
  }
  SemaphoreWord::AcquireStep first_step;
  SemaphoreWord::AcquireStep second_step;
  PromiseWait first{first_step};
  PromiseWait second{second_step};
};

// A semaphore over raw memory, as the binding uses it over a SharedArrayBuffer.
class SemaphoreWordTest : public ::testing::Test {
 protected:
  std::int32_t raw() { return atomic_ref<std::int32_t>(words_[0]).load(); }
  void set_raw(std::int32_t value) { atomic_ref<std::int32_t>(words_[0]).store(value); }
  std::size_t queued() { return parking_lot::queued_count(sem_.address()); }

  // The state every test must end in: `permits` available, nobody queued, the waiters bit clear.
  void ExpectIdleWith(std::int32_t permits) {
    EXPECT_EQ(raw(), permits) << "only the permits field is set";
    EXPECT_EQ(queued(), 0u) << "no waiter is left in the parking lot";
  }

  alignas(SemaphoreWord::kAlign) std::int32_t words_[SemaphoreWord::kWordCount] = {};
  SemaphoreWord sem_{words_};
};

TEST_F(SemaphoreWordTest, LayoutAndZeroMeansNoPermits) {
  EXPECT_EQ(SemaphoreWord::kBytes, 4u);
  EXPECT_EQ(static_cast<std::uint32_t>(SemaphoreWord::kWaitersBit), 0x80000000u);
  EXPECT_EQ(SemaphoreWord::kHandOffBit, 0x40000000);
  EXPECT_EQ(SemaphoreWord::kMaxPermits, 0x3FFFFFFF);
  EXPECT_EQ(sem_.available(), 0);
  EXPECT_FALSE(sem_.waiters_queued());
  EXPECT_FALSE(sem_.try_acquire(1));
  ExpectIdleWith(0);
}

TEST_F(SemaphoreWordTest, TryAcquireTakesOnlyAvailablePermits) {
  ASSERT_EQ(sem_.release(3), ReleaseStatus::kReleased);
  EXPECT_FALSE(sem_.try_acquire(4));
  EXPECT_EQ(sem_.available(), 3) << "a failed try takes nothing";
  EXPECT_TRUE(sem_.try_acquire(2));
  EXPECT_TRUE(sem_.try_acquire(1));
  EXPECT_FALSE(sem_.try_acquire(1));
  ExpectIdleWith(0);
}

TEST_F(SemaphoreWordTest, ReleaseAddsUpToTheMaximumAndRefusesOverflowWithoutChange) {
  ASSERT_EQ(sem_.release(SemaphoreWord::kMaxPermits - 1), ReleaseStatus::kReleased);
  EXPECT_EQ(sem_.release(2), ReleaseStatus::kOverflow);
  EXPECT_EQ(sem_.available(), SemaphoreWord::kMaxPermits - 1);
  EXPECT_EQ(sem_.release(1), ReleaseStatus::kReleased);
  EXPECT_EQ(sem_.release(1), ReleaseStatus::kOverflow);
  EXPECT_EQ(sem_.release_slow(1), ReleaseStatus::kOverflow);
  EXPECT_TRUE(sem_.try_acquire(SemaphoreWord::kMaxPermits));
  ExpectIdleWith(0);
}

TEST_F(SemaphoreWordTest, BadCountsAreRefusedWithoutTouchingTheWord) {
  ASSERT_EQ(sem_.release(5), ReleaseStatus::kReleased);
  for (const std::int32_t bad :
       {0, -1, SemaphoreWord::kMaxPermits + 1, std::numeric_limits<std::int32_t>::min()}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(sem_.try_acquire(bad));
    EXPECT_EQ(sem_.acquire(bad), Outcome::kCorrupt) << "refused, never waited on";
    EXPECT_EQ(sem_.release(bad), ReleaseStatus::kBadCount);
    PermitWaiter waiter(bad);
    EXPECT_EQ(sem_.acquire_or_enqueue(waiter), Outcome::kCorrupt);
  }
  ExpectIdleWith(5);
}

TEST_F(SemaphoreWordTest, CorruptWordIsReportedByEveryOperationAndNeverWaitedOn) {
  // Permits set aside for waiters while none is queued.
  for (const std::int32_t corrupt : {SemaphoreWord::kHandOffBit, SemaphoreWord::kHandOffBit | 7}) {
    SCOPED_TRACE(corrupt);
    set_raw(corrupt);
    EXPECT_FALSE(sem_.try_acquire(1));
    EXPECT_EQ(sem_.acquire(1), Outcome::kCorrupt) << "no deadline: must not wait";
    EXPECT_EQ(sem_.release(1), ReleaseStatus::kCorrupt);
    PermitWaiter waiter(1);
    EXPECT_EQ(sem_.acquire_or_enqueue(waiter), Outcome::kCorrupt);
    EXPECT_EQ(raw(), corrupt) << "nothing is written to a corrupt word";
    EXPECT_EQ(queued(), 0u);
  }
  set_raw(0);
}

TEST_F(SemaphoreWordTest, TimedOutAcquireLeavesNoWaiterAndTakesNothing) {
  ASSERT_EQ(sem_.release(2), ReleaseStatus::kReleased);
  EXPECT_EQ(sem_.acquire(3, Deadline::after_ms(5)), Outcome::kTimedOut);
  ExpectIdleWith(2);
}

TEST_F(SemaphoreWordTest, ExpiredDeadlineStillTakesFreePermitsButNeverQueues) {
  ASSERT_EQ(sem_.release(2), ReleaseStatus::kReleased);
  EXPECT_EQ(sem_.acquire_slow(2, Deadline::after_ms(0)), Outcome::kAcquired);
  EXPECT_EQ(sem_.acquire_slow(1, Deadline::after_ms(0)), Outcome::kTimedOut);
  ExpectIdleWith(0);
}

TEST_F(SemaphoreWordTest, ReleaseGrantsTheHeadOnlyOnceItsWholeRequestFitsThenTheNextInOrder) {
  const FairnessOverride fair(parking_lot::FairnessForTesting::kAlways);
  PermitWaiter large(3);
  PermitWaiter small_a(1);
  PermitWaiter small_b(1);
  ASSERT_EQ(sem_.acquire_or_enqueue(large), Outcome::kPending);
  ASSERT_EQ(sem_.acquire_or_enqueue(small_a), Outcome::kPending);
  ASSERT_EQ(sem_.acquire_or_enqueue(small_b), Outcome::kPending);
  EXPECT_TRUE(sem_.waiters_queued());

  ASSERT_EQ(sem_.release(1), ReleaseStatus::kReleased);
  ASSERT_EQ(sem_.release(1), ReleaseStatus::kReleased);
  EXPECT_EQ(sem_.available(), 2) << "the head needs 3: nobody behind it may take these";
  EXPECT_TRUE(large.tokens().empty());
  EXPECT_TRUE(small_a.tokens().empty());
  EXPECT_EQ(queued(), 3u);

  ASSERT_EQ(sem_.release(2), ReleaseStatus::kReleased);
  EXPECT_TRUE(large.granted());
  EXPECT_TRUE(small_a.granted()) << "4 permits: 3 to the head, then 1 to the next";
  EXPECT_TRUE(small_b.tokens().empty());
  EXPECT_EQ(sem_.available(), 0);
  EXPECT_TRUE(sem_.waiters_queued());

  ASSERT_EQ(sem_.release(3), ReleaseStatus::kReleased);
  EXPECT_TRUE(small_b.granted());
  ExpectIdleWith(2);
}

TEST_F(SemaphoreWordTest, NewcomersBargeUntilAFairTurnSetsThePermitsAsideForTheHead) {
  const FairnessOverride fair(parking_lot::FairnessForTesting::kAlways);
  ASSERT_EQ(sem_.release(2), ReleaseStatus::kReleased);
  PermitWaiter large(5);
  ASSERT_EQ(sem_.acquire_or_enqueue(large), Outcome::kPending);
  EXPECT_TRUE(sem_.try_acquire(1)) << "no release has given the head its turn yet";
  ASSERT_EQ(sem_.release(1), ReleaseStatus::kReleased);
  EXPECT_EQ(raw(), SemaphoreWord::kWaitersBit | SemaphoreWord::kHandOffBit | 2);
  EXPECT_FALSE(sem_.try_acquire(1)) << "2 permits are free, but set aside for the head";
  EXPECT_EQ(sem_.acquire(1, Deadline::after_ms(1)), Outcome::kTimedOut);
  PermitWaiter newcomer(1);
  ASSERT_EQ(sem_.acquire_or_enqueue(newcomer), Outcome::kPending);
  EXPECT_EQ(sem_.available(), 2);

  ASSERT_EQ(sem_.release(3), ReleaseStatus::kReleased);
  EXPECT_TRUE(large.granted());
  EXPECT_TRUE(newcomer.tokens().empty());
  ASSERT_EQ(sem_.release(1), ReleaseStatus::kReleased);
  EXPECT_TRUE(newcomer.granted());
  ExpectIdleWith(0);
}

TEST_F(SemaphoreWordTest, OutsideFairTurnsAReleaseWakesTheHeadToCompeteAndRunningThreadsMayBarge) {
  const FairnessOverride unfair(parking_lot::FairnessForTesting::kNever);
  TwoQueuedWaits waits(sem_);
  PromiseWait& first = waits.first;
  PromiseWait& second = waits.second;
  ASSERT_EQ(sem_.release(1), ReleaseStatus::kReleased);
  ASSERT_TRUE(first.waiter().WaitForWakes(1));
  EXPECT_EQ(first.waiter().last_token(), SemaphoreWord::kCompete);
  EXPECT_EQ(raw(), SemaphoreWord::kWaitersBit | 1) << "released into the word, the bit still set";
  EXPECT_TRUE(sem_.try_acquire(1)) << "a running thread takes it first";
  EXPECT_EQ(first.Settle(), Outcome::kPending) << "lost the race: queued again, at the back";
  EXPECT_EQ(queued(), 2u);

  ASSERT_EQ(sem_.release(1), ReleaseStatus::kReleased);
  EXPECT_EQ(second.Settle(), Outcome::kAcquired);
  EXPECT_TRUE(sem_.waiters_queued());
  ASSERT_EQ(sem_.release(1), ReleaseStatus::kReleased);
  EXPECT_EQ(first.Settle(), Outcome::kAcquired);
  ASSERT_EQ(sem_.release(2), ReleaseStatus::kReleased);
  ExpectIdleWith(2);
}

TEST_F(SemaphoreWordTest, OutsideFairTurnsAReleaseWakesAsManyAsItsPermitsCover) {
  const FairnessOverride unfair(parking_lot::FairnessForTesting::kNever);
  PermitWaiter a(1);
  PermitWaiter b(2);
  PermitWaiter c(1);
  for (PermitWaiter* w : {&a, &b, &c}) ASSERT_EQ(sem_.acquire_or_enqueue(*w), Outcome::kPending);
  ASSERT_EQ(sem_.release(3), ReleaseStatus::kReleased);
  EXPECT_EQ(a.tokens(), std::vector<WakeToken>{SemaphoreWord::kCompete});
  EXPECT_EQ(b.tokens(), std::vector<WakeToken>{SemaphoreWord::kCompete});
  EXPECT_TRUE(c.tokens().empty()) << "3 permits cover the first two requests only";
  EXPECT_EQ(raw(), SemaphoreWord::kWaitersBit | 3);
  // The woken ones give up: what they were woken for goes to the one behind them.
  sem_.abandon_wake(a.request(), a.tokens()[0]);
  EXPECT_EQ(c.tokens(), std::vector<WakeToken>{SemaphoreWord::kCompete});
  EXPECT_FALSE(sem_.waiters_queued()) << "the last one out of the queue clears the bit";
  sem_.abandon_wake(b.request(), b.tokens()[0]);
  sem_.abandon_wake(c.request(), c.tokens()[0]);
  ExpectIdleWith(3);
}

TEST_F(SemaphoreWordTest, CancelledHeadUnblocksTheSmallerWaitersBehindIt) {
  const FairnessOverride fair(parking_lot::FairnessForTesting::kAlways);
  PermitWaiter large(5);
  PermitWaiter small_a(1);
  PermitWaiter small_b(1);
  PermitWaiter too_big(3);
  for (PermitWaiter* w : {&large, &small_a, &small_b, &too_big}) {
    ASSERT_EQ(sem_.acquire_or_enqueue(*w), Outcome::kPending);
  }
  ASSERT_EQ(sem_.release(2), ReleaseStatus::kReleased);
  EXPECT_TRUE(small_a.tokens().empty()) << "set aside for the head";
  ASSERT_TRUE(sem_.cancel(large));
  EXPECT_TRUE(small_a.granted());
  EXPECT_TRUE(small_b.granted());
  EXPECT_TRUE(too_big.tokens().empty());
  EXPECT_TRUE(sem_.waiters_queued());

  ASSERT_TRUE(sem_.cancel(too_big));
  ExpectIdleWith(0);
}

TEST_F(SemaphoreWordTest, TheLastWaiterLeavingClearsTheWaitersBitAsItLeaves) {
  PermitWaiter waiter(1);
  ASSERT_EQ(sem_.acquire_or_enqueue(waiter), Outcome::kPending);
  ASSERT_TRUE(sem_.cancel(waiter));
  EXPECT_FALSE(sem_.waiters_queued()) << "no stale marker outlives the last waiter";
  ASSERT_EQ(sem_.release(1), ReleaseStatus::kReleased);
  ExpectIdleWith(1);
}

TEST_F(SemaphoreWordTest, InterruptedBlockingHeadUnblocksTheSmallerWaiterBehindIt) {
  const FairnessOverride fair(parking_lot::FairnessForTesting::kAlways);
  std::atomic<bool> stop{false};
  const auto stop_requested = [&] { return stop.load(); };
  const Interrupt interrupt{std::chrono::milliseconds(1), stop_requested};
  Outcome status = Outcome::kAcquired;
  ThreadGroup threads;
  threads.Start([&] {
    status = with_interrupt(&interrupt, [&] { return sem_.acquire(5, Deadline::never()); });
  });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 1; }));
  PermitWaiter small(1);
  ASSERT_EQ(sem_.acquire_or_enqueue(small), Outcome::kPending);
  ASSERT_EQ(sem_.release(2), ReleaseStatus::kReleased);
  EXPECT_TRUE(small.tokens().empty()) << "set aside for the head";
  stop = true;
  threads.JoinOrAbort();
  EXPECT_EQ(status, Outcome::kInterrupted);
  EXPECT_TRUE(small.granted()) << "the interrupted head's leaving must grant the one behind it";
  ExpectIdleWith(1);
}

TEST_F(SemaphoreWordTest, TimedOutBlockingHeadUnblocksTheSmallerWaiterBehindIt) {
  const FairnessOverride fair(parking_lot::FairnessForTesting::kAlways);
  // The small waiter queues behind the head if the head is still waiting, and takes the permit at
  // once if the head has timed out already: either way it gets it and nobody is left queued.
  std::atomic<Outcome> status{Outcome::kAcquired};
  ASSERT_EQ(sem_.release(1), ReleaseStatus::kReleased);
  ThreadGroup threads;
  threads.Start([&] { status = sem_.acquire(2, Deadline::after_ms(20)); });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 1 || status == Outcome::kTimedOut; }));
  PermitWaiter small(1);
  const Outcome step = sem_.acquire_or_enqueue(small);
  threads.JoinOrAbort();
  EXPECT_EQ(status, Outcome::kTimedOut);
  if (step == Outcome::kPending) {
    ASSERT_TRUE(WaitUntil([&] { return small.granted(); }));
  } else {
    EXPECT_EQ(step, Outcome::kAcquired);
  }
  ExpectIdleWith(0);
}

TEST_F(SemaphoreWordTest, AbandonedGrantGoesToTheNextWaiter) {
  const FairnessOverride fair(parking_lot::FairnessForTesting::kAlways);
  PermitWaiter first(2);
  PermitWaiter second(2);
  ASSERT_EQ(sem_.acquire_or_enqueue(first), Outcome::kPending);
  ASSERT_EQ(sem_.acquire_or_enqueue(second), Outcome::kPending);
  ASSERT_EQ(sem_.release(2), ReleaseStatus::kReleased);
  ASSERT_TRUE(first.granted());
  EXPECT_FALSE(parking_lot::cancel(first)) << "already dequeued by the grant";

  sem_.abandon_wake(first.request(), first.tokens()[0]);
  EXPECT_TRUE(second.granted());
  EXPECT_EQ(sem_.available(), 0);
  sem_.abandon_wake(second.request(), second.tokens()[0]);
  ExpectIdleWith(2);
}

TEST_F(SemaphoreWordTest, BlockingWaitersAreGrantedInArrivalOrder) {
  const FairnessOverride fair(parking_lot::FairnessForTesting::kAlways);
  std::mutex order_lock;
  std::vector<int> order;  // guarded by order_lock
  ThreadGroup threads;
  const std::array<std::int32_t, 3> requests = {3, 1, 2};
  for (std::size_t i = 0; i < requests.size(); ++i) {
    threads.Start([&, i] {
      ASSERT_EQ(sem_.acquire(requests[i], HangGuard()), Outcome::kAcquired);
      std::lock_guard<std::mutex> guard(order_lock);
      order.push_back(static_cast<int>(i));
    });
    ASSERT_TRUE(WaitUntil([&] { return queued() == i + 1; }));
  }
  // One permit at a time: after each release the grants it made are complete, so a waiter that
  // arrived later could only have been served early by barging. Waiting for each granted thread
  // to record itself before the next release makes `order` the order of the grants.
  auto recorded = [&] {
    std::lock_guard<std::mutex> guard(order_lock);
    return order.size();
  };
  for (int i = 0; i < 6; ++i) {
    ASSERT_EQ(sem_.release(1), ReleaseStatus::kReleased);
    const std::size_t expected_queued = i < 2 ? 3 : i < 3 ? 2 : i < 5 ? 1 : 0;
    EXPECT_EQ(queued(), expected_queued) << "after release " << i;
    ASSERT_TRUE(WaitUntil([&] { return recorded() == 3 - expected_queued; }));
  }
  threads.JoinOrAbort();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  ExpectIdleWith(0);
}

TEST_F(SemaphoreWordTest, OneAcquireStepServesAPromiseWaitAndABlockingWait) {
  testing::PromiseStep<SemaphoreWord::AcquireStep> promise(sem_, 2);
  ASSERT_EQ(promise.Start(), Outcome::kPending);
  std::atomic<Outcome> blocking{Outcome::kPending};
  ThreadGroup threads;
  threads.Start([&] {
    SemaphoreWord::AcquireStep step(sem_, 1);
    blocking = wait_blocking(step, HangGuard());
  });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 2; }));
  ASSERT_EQ(sem_.release(2), ReleaseStatus::kReleased);
  ASSERT_EQ(promise.Settle(), Outcome::kAcquired);
  EXPECT_EQ(sem_.available(), 0);
  EXPECT_EQ(blocking.load(), Outcome::kPending);
  ASSERT_EQ(sem_.release(1), ReleaseStatus::kReleased);
  threads.JoinOrAbort();
  EXPECT_EQ(blocking.load(), Outcome::kAcquired);
  ASSERT_EQ(sem_.release(3), ReleaseStatus::kReleased);
  ExpectIdleWith(3);
}

TEST_F(SemaphoreWordTest, APromiseWaitCancelledAsItIsWokenPassesThePermitsOn) {
  TwoQueuedWaits waits(sem_);
  PromiseWait& first = waits.first;
  PromiseWait& second = waits.second;
  ASSERT_EQ(sem_.release(1), ReleaseStatus::kReleased);
  // Dequeued by the release, so the abort comes too late to take it out: what it was woken for
  // must reach the wait behind it.
  EXPECT_EQ(first.Cancel(), Outcome::kCancelled);
  ASSERT_EQ(second.Settle(), Outcome::kAcquired);
  EXPECT_EQ(sem_.available(), 0);
  ASSERT_EQ(sem_.release(1), ReleaseStatus::kReleased);
  ExpectIdleWith(1);
}

TEST_F(SemaphoreWordTest, ABlockingStepTimesOutOrIsGrantedAndLeavesNothingQueued) {
  SemaphoreWord::AcquireStep too_late(sem_, 1);
  EXPECT_EQ(wait_blocking(too_late, Deadline::after_ms(2)), Outcome::kTimedOut);
  ExpectIdleWith(0);
  std::atomic<Outcome> blocking{Outcome::kPending};
  ThreadGroup threads;
  threads.Start([&] {
    SemaphoreWord::AcquireStep step(sem_, 2);
    blocking = wait_blocking(step, HangGuard());
  });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 1; }));
  ASSERT_EQ(sem_.release(1), ReleaseStatus::kReleased);
  EXPECT_EQ(blocking.load(), Outcome::kPending) << "1 of the 2 it asks for";
  ASSERT_EQ(sem_.release(1), ReleaseStatus::kReleased);
  threads.JoinOrAbort();
  EXPECT_EQ(blocking.load(), Outcome::kAcquired);
  ExpectIdleWith(0);
}

TEST(SemaphoreTest, NeverMoreInUseThanPermitsAndEveryAcquireIsMatched) {
  constexpr std::int32_t kPermits = 3;
  constexpr int kThreads = 8;
  constexpr int kIterations = 3000;
  Semaphore sem(kPermits);
  std::atomic<std::int32_t> in_use{0};
  std::atomic<std::int32_t> most_in_use{0};
  std::atomic<std::int64_t> work{0};
  ThreadGroup threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.Start([&, t] {
      for (int i = 0; i < kIterations; ++i) {
        const std::int32_t n = 1 + (t + i) % 2;  // mixed requests of 1 and 2
        sem.acquire(n);
        const std::int32_t now = in_use.fetch_add(n) + n;
        std::int32_t most = most_in_use.load();
        while (now > most && !most_in_use.compare_exchange_weak(most, now)) {
        }
        work.fetch_add(n);
        if (i % 32 == 0) std::this_thread::yield();  // let waiters queue up
        in_use.fetch_sub(n);
        sem.release(n);
      }
    });
  }
  threads.JoinOrAbort();
  EXPECT_LE(most_in_use.load(), kPermits);
  EXPECT_GE(most_in_use.load(), 1);
  EXPECT_EQ(work.load(), std::int64_t{kThreads} * kIterations * 3 / 2);
  EXPECT_EQ(sem.available(), kPermits);
}

// Threads taking 1 or 2 of 3 permits under `fairness`, through a Promise step driven on the
// thread itself, or blocking with deadlines short enough to race the wake-ups, or with an
// interrupt that fires every third poll: never more in use than exist, every thread finishes (no
// lost wake-up), and a waiter giving up as it is woken passes on what it was woken for, so all
// permits are back at the end with nobody queued and the bits clear.
void StressUnder(parking_lot::FairnessForTesting fairness) {
  const FairnessOverride policy(fairness);
  constexpr std::int32_t kPermits = 3;
  constexpr int kIterations = 1500;
  alignas(SemaphoreWord::kAlign) std::int32_t raw = kPermits;
  SemaphoreWord sem(&raw);
  std::atomic<std::int32_t> in_use{0};
  std::atomic<bool> over_limit{false};
  std::atomic<std::int64_t> acquired{0};
  ThreadGroup threads;
  for (int t = 0; t < 6; ++t) {
    threads.Start([&, t] {
      int polls = 0;
      const auto every_third_poll = [&] { return ++polls % 3 == 0; };
      const Interrupt interrupt{std::chrono::microseconds(20), every_third_poll};
      for (int i = 0; i < kIterations; ++i) {
        const std::int32_t n = 1 + (i + t) % 2;
        Outcome outcome;
        if (t % 3 == 0) {
          SemaphoreWord::AcquireStep step(sem, n);
          PromiseWait wait(step);
          outcome = wait.Start();
          while (outcome == Outcome::kPending) {
            const std::optional<Outcome> settled = wait.Settle();
            ASSERT_TRUE(settled.has_value()) << "a wake-up was lost";
            outcome = *settled;
          }
        } else if (t % 3 == 1) {
          outcome = sem.acquire(n, Deadline::after_ms((i % 4) * 0.05));  // 0 to 150 us
        } else {
          outcome = with_interrupt(&interrupt, [&] { return sem.acquire(n, HangGuard()); });
        }
        if (outcome != Outcome::kAcquired) {
          ASSERT_EQ(outcome, t % 3 == 1 ? Outcome::kTimedOut : Outcome::kInterrupted);
          ASSERT_NE(t % 3, 0) << "a Promise wait without a cancel always succeeds";
          continue;
        }
        if (in_use.fetch_add(n) + n > kPermits) over_limit = true;
        ++acquired;
        if (i % 16 == 0) std::this_thread::yield();
        in_use.fetch_sub(n);
        ASSERT_EQ(sem.release(n), ReleaseStatus::kReleased);
      }
    });
  }
  threads.JoinOrAbort();
  EXPECT_FALSE(over_limit.load());
  EXPECT_GE(acquired.load(), 2 * kIterations) << "every Promise wait succeeded";
  EXPECT_EQ(atomic_ref<std::int32_t>(raw).load(), kPermits) << "all permits back, bits clear";
  EXPECT_EQ(parking_lot::queued_count(&raw), 0u);
}

TEST(SemaphoreTest, StressWithHandOffsOnly) {
  StressUnder(parking_lot::FairnessForTesting::kAlways);
}

TEST(SemaphoreTest, StressWithBargingOnly) {
  StressUnder(parking_lot::FairnessForTesting::kNever);
}

TEST(SemaphoreTest, StressWithTheFairnessTimer) {
  StressUnder(parking_lot::FairnessForTesting::kTimer);
}

// More threads than permits with tiny sections, all blocking: the case where a waiter spins before
// it queues (acquire_or_enqueue) and running threads barge past queued ones. Every fourth thread
// acquires with a deadline of 0 to 40 us, short enough to end in the spin or right after queueing.
// Never more in use than exist, every count matched, and at the end every permit is back with
// nobody queued.
void ManyThreadsOverFewPermits(int thread_count, std::int32_t permits) {
  constexpr int kIterations = 4000;
  alignas(SemaphoreWord::kAlign) std::int32_t raw = permits;
  SemaphoreWord sem(&raw);
  std::atomic<std::int32_t> in_use{0};
  std::atomic<bool> over_limit{false};
  std::atomic<std::int64_t> acquired{0};
  std::atomic<std::int64_t> timed_out{0};
  ThreadGroup threads;
  for (int t = 0; t < thread_count; ++t) {
    threads.Start([&, t] {
      for (int i = 0; i < kIterations; ++i) {
        const bool timed = t % 4 == 3;
        const Outcome outcome =
            sem.acquire(1, timed ? Deadline::after_ms((i % 3) * 0.02) : HangGuard());
        if (outcome != Outcome::kAcquired) {
          ASSERT_TRUE(timed) << "an untimed acquire always succeeds";
          ASSERT_EQ(outcome, Outcome::kTimedOut);
          ++timed_out;
          continue;
        }
        if (in_use.fetch_add(1) + 1 > permits) over_limit = true;
        ++acquired;
        in_use.fetch_sub(1);
        ASSERT_EQ(sem.release(1), ReleaseStatus::kReleased);
      }
    });
  }
  threads.JoinOrAbort();
  EXPECT_FALSE(over_limit.load());
  EXPECT_EQ(acquired.load() + timed_out.load(), std::int64_t{thread_count} * kIterations);
  EXPECT_EQ(atomic_ref<std::int32_t>(raw).load(), permits) << "all permits back, bits clear";
  EXPECT_EQ(parking_lot::queued_count(&raw), 0u);
}

TEST(SemaphoreTest, EightThreadsOverTwoPermits) {
  ManyThreadsOverFewPermits(8, 2);
}

TEST(SemaphoreTest, SixteenThreadsOverFourPermits) {
  ManyThreadsOverFewPermits(16, 4);
}

// A thread being stopped while it waits for permits (a worker's terminate()) leaves promptly
// whether the stop finds it spinning or queued, takes nothing and leaves nothing queued.
TEST(SemaphoreTest, AStoppedWaiterLeavesPromptlyFromTheSpinOrTheQueue) {
  alignas(SemaphoreWord::kAlign) std::int32_t raw = 0;
  SemaphoreWord sem(&raw);
  for (const bool someone_queued : {false, true}) {
    PermitWaiter ahead(1);
    if (someone_queued) {
      ASSERT_EQ(sem.acquire_or_enqueue(ahead), Outcome::kPending);
    }
    std::atomic<bool> stop{false};
    const auto stop_requested = [&] { return stop.load(); };
    const Interrupt interrupt{std::chrono::milliseconds(1), stop_requested};
    std::atomic<Outcome> outcome{Outcome::kPending};
    ThreadGroup threads;
    threads.Start(
        [&] { outcome = with_interrupt(&interrupt, [&] { return sem.acquire(1, HangGuard()); }); });
    ASSERT_TRUE(
        WaitUntil([&] { return parking_lot::queued_count(&raw) == (someone_queued ? 2u : 1u); }));
    const auto stopped_at = Clock::now();
    stop = true;
    threads.JoinOrAbort();
    EXPECT_EQ(outcome.load(), Outcome::kInterrupted);
    EXPECT_LT(Clock::now() - stopped_at, std::chrono::seconds(2)) << "left promptly";
    // Its leaving runs the grant step, which clears the waiters bit with the queue empty.
    if (someone_queued) {
      ASSERT_TRUE(sem.cancel(ahead));
    }
    EXPECT_EQ(atomic_ref<std::int32_t>(raw).load(), 0) << "nothing taken, the bits clear";
    EXPECT_EQ(parking_lot::queued_count(&raw), 0u);
  }
}

TEST(SemaphoreTest, LargeRequestsCompleteWhileSmallOnesKeepComing) {
  // With barging alone, the small requests (each releasing right after acquiring) would keep at
  // least one permit taken almost all the time, and acquire(kPermits) could wait forever: the
  // fairness timer's turns set the permits aside for it.
  constexpr std::int32_t kPermits = 4;
  Semaphore sem(kPermits);
  std::atomic<bool> done{false};
  std::atomic<std::int64_t> small_acquires{0};
  ThreadGroup threads;
  for (int t = 0; t < 3; ++t) {
    threads.Start([&] {
      while (!done.load()) {
        sem.acquire(1);
        ++small_acquires;
        sem.release(1);
      }
    });
  }
  threads.Start([&] {
    for (int i = 0; i < 200; ++i) {
      sem.acquire(kPermits);
      EXPECT_EQ(sem.available(), 0) << "holding every permit";
      sem.release(kPermits);
    }
    done = true;
  });
  threads.JoinOrAbort();
  EXPECT_EQ(sem.available(), kPermits);
}

TEST(SemaphoreTest, TryAcquireForTimesOutOrIsGrantedByARelease) {
  Semaphore sem(1);
  EXPECT_FALSE(sem.try_acquire_for(2ms, 2));
  EXPECT_EQ(sem.available(), 1);
  ThreadGroup threads;
  bool acquired = false;
  threads.Start([&] { acquired = sem.try_acquire_for(kWaitLimit, 2); });
  sem.release(1);
  threads.JoinOrAbort();
  EXPECT_TRUE(acquired);
  EXPECT_EQ(sem.available(), 0);
}

TEST(SemaphoreTest, BadArgumentsThrowAndChangeNothing) {
  EXPECT_THROW(Semaphore(-1), std::invalid_argument);
  EXPECT_THROW(Semaphore(SemaphoreWord::kMaxPermits + 1), std::invalid_argument);
  Semaphore sem(SemaphoreWord::kMaxPermits);
  EXPECT_THROW(sem.acquire(0), std::invalid_argument);
  EXPECT_THROW(sem.release(-2), std::invalid_argument);
  EXPECT_THROW(sem.release(1), std::overflow_error);
  EXPECT_FALSE(sem.try_acquire(0));
  EXPECT_EQ(sem.available(), SemaphoreWord::kMaxPermits);
}

}  // namespace
}  // namespace parklock
