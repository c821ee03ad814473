// Tests of the parking lot (parking_lot.h) with real threads: validation, per-address FIFO order,
// tokens, timeouts, interrupts, asynchronous waiters and the cancel-versus-wake contract.
#include "lot/parking_lot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "lot/atomic_ref.h"
#include "primitives/futex.h"
#include "primitives/mutex.h"
#include "test_support.h"

namespace parklock {
namespace {

using namespace std::chrono_literals;
using testing::kHangGuardMs;
using testing::RecordingWaiter;
using testing::ThreadGroup;
using testing::WaitUntil;
using testing::with_interrupt;
using Status = ParkResult::Status;

// A deadline for waits that should end by a wake-up: if the wake-up is lost the wait ends as
// kTimedOut, a readable failure, instead of hanging the suite.
Deadline HangGuard() {
  return Deadline::after_ms(kHangGuardMs);
}

TEST(ParkingLotTest, ParkWithFailingValidateReturnsInvalidAndDoesNotQueue) {
  alignas(4) std::int32_t word = 0;
  int validations = 0;
  const auto never_valid = [&] {
    ++validations;
    return false;
  };

  const ParkResult result = parking_lot::park(&word, never_valid, HangGuard());

  EXPECT_EQ(result.status, Status::kInvalid);
  EXPECT_EQ(validations, 1);
  EXPECT_EQ(parking_lot::queued_count(&word), 0u);
}

TEST(ParkingLotTest, EnqueueWithFailingValidateDoesNotQueue) {
  alignas(4) std::int32_t word = 0;
  RecordingWaiter waiter;

  EXPECT_FALSE(parking_lot::enqueue(&word, waiter, [] { return false; }));
  EXPECT_EQ(parking_lot::queued_count(&word), 0u);
  EXPECT_FALSE(
      parking_lot::unpark_one(&word, [](const UnparkInfo&) { return WakeToken{1}; }).unparked);
  EXPECT_EQ(waiter.wake_count(), 0u);
}

TEST(ParkingLotTest, ValidateSeesTheWordUnderTheSameLockAsTheWaker) {
  // The protocol a primitive relies on: the waker changes the word, then unparks; a waiter that
  // validated the old value is therefore queued before the waker looks, and one that comes later
  // sees the new value and does not park. Either way nobody sleeps through the change.
  alignas(4) std::int32_t word = 0;
  atomic_ref<std::int32_t> value(word);
  constexpr int kRounds = 200;
  for (int round = 0; round < kRounds; ++round) {
    value.store(0);
    ParkResult result{Status::kInvalid};
    ThreadGroup threads;
    threads.Start([&] {
      result = parking_lot::park(
          &word, [&] { return value.load() == 0; }, HangGuard());
    });
    value.store(1);
    parking_lot::unpark_some(&word, std::numeric_limits<std::size_t>::max(), 0);
    threads.JoinOrAbort();
    EXPECT_TRUE(result.status == Status::kInvalid || result.status == Status::kUnparked)
        << "round " << round << ": status " << static_cast<int>(result.status);
  }
  EXPECT_EQ(parking_lot::queued_count(&word), 0u);
}

TEST(ParkingLotTest, UnparkOneWakesTheWaitersOfAnAddressInArrivalOrder) {
  constexpr int kWaiters = 6;
  alignas(4) std::int32_t word = 0;
  std::array<std::atomic<ThreadId>, kWaiters> thread_ids{};
  std::array<ParkResult, kWaiters> results{};
  ThreadGroup threads;
  for (int i = 0; i < kWaiters; ++i) {
    threads.Start([&, i] {
      thread_ids[i] = current_thread_id();
      results[i] = parking_lot::park(
          &word, [] { return true; }, HangGuard());
    });
    // One at a time, so the arrival order is the start order.
    ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(&word) == i + 1u; }));
  }

  for (int i = 0; i < kWaiters; ++i) {
    UnparkInfo seen_by_decide;
    int decide_calls = 0;
    const UnparkInfo info = parking_lot::unpark_one(&word, [&](const UnparkInfo& found) {
      seen_by_decide = found;
      ++decide_calls;
      return WakeToken{100 + i};
    });
    EXPECT_EQ(decide_calls, 1);
    EXPECT_TRUE(info.unparked);
    EXPECT_EQ(info.thread, thread_ids[i].load()) << "waiter " << i << " was not next";
    EXPECT_EQ(info.has_more, i + 1 < kWaiters);
    EXPECT_EQ(seen_by_decide.thread, info.thread);
    EXPECT_EQ(seen_by_decide.has_more, info.has_more);
  }
  threads.JoinOrAbort();

  for (int i = 0; i < kWaiters; ++i) {
    EXPECT_EQ(results[i].status, Status::kUnparked) << "waiter " << i;
    EXPECT_EQ(results[i].token, 100 + i) << "waiter " << i;
    EXPECT_FALSE(results[i].interrupted);
  }
  EXPECT_EQ(parking_lot::queued_count(&word), 0u);
}

TEST(ParkingLotTest, UnparkOneWithNobodyQueuedStillRunsDecide) {
  alignas(4) std::int32_t word = 0;
  int decide_calls = 0;
  const UnparkInfo info = parking_lot::unpark_one(&word, [&](const UnparkInfo& found) {
    ++decide_calls;
    EXPECT_FALSE(found.unparked);
    EXPECT_FALSE(found.has_more);
    EXPECT_EQ(found.thread, kNoThread);
    return WakeToken{0};
  });
  EXPECT_EQ(decide_calls, 1);
  EXPECT_FALSE(info.unparked);
}

// Unparks the one waiter queued for `word` and returns whether that unpark was due to be fair.
bool UnparkIsFair(std::int32_t& word) {
  bool fair = false;
  const UnparkInfo info = parking_lot::unpark_one(&word, [&](const UnparkInfo& found) {
    fair = found.be_fair;
    return WakeToken{0};
  });
  EXPECT_TRUE(info.unparked);
  return fair;
}

TEST(ParkingLotTest, UnparkOneIsFairAboutOncePerFairnessIntervalOfWaiting) {
  alignas(4) std::int32_t word = 0;
  // Queues a waiter (in an idle bucket: the previous one has been unparked), leaves it queued
  // for `waited`, and unparks it.
  const auto unpark_is_fair = [&](Clock::duration waited) {
    RecordingWaiter waiter(/*thread=*/7);
    EXPECT_TRUE(parking_lot::enqueue(&word, waiter, [] { return true; }));
    if (waited > Clock::duration::zero()) std::this_thread::sleep_for(waited);
    return UnparkIsFair(word);
  };
  // A waiter queued for longer than the timer runs is handed over; the unparks right after are
  // not (the timer restarts, for at most kFairnessInterval, so this could only fail on a stall
  // that long).
  EXPECT_TRUE(unpark_is_fair(2 * kFairnessInterval));
  int fair_in_a_row = 0;
  while (unpark_is_fair(Clock::duration::zero())) ++fair_in_a_row;
  EXPECT_LT(fair_in_a_row, 3);
  EXPECT_TRUE(unpark_is_fair(2 * kFairnessInterval));
  {
    const testing::FairnessOverride never(parking_lot::FairnessForTesting::kNever);
    EXPECT_FALSE(unpark_is_fair(2 * kFairnessInterval));
  }
  const testing::FairnessOverride always(parking_lot::FairnessForTesting::kAlways);
  EXPECT_TRUE(unpark_is_fair(Clock::duration::zero()));
  EXPECT_TRUE(unpark_is_fair(Clock::duration::zero()));
}

// A quiet spell owes nobody a turn: the timer starts over when a waiter joins an idle bucket,
// whether it parks there or is requeued there, so an unpark right after is due to be fair only
// if the restarted timer drew a time shorter than the gap (rarely: the draw is uniform over
// kFairnessInterval). Before, every one of these unparks came after a due timer and was fair.
TEST(ParkingLotTest, TheFirstWaiterAfterAQuietSpellIsNotHandedOverAtOnce) {
  constexpr int kTries = 20;
  alignas(4) std::int32_t word = 0;
  alignas(4) std::int32_t condition = 0;
  int fair_after_park = 0;
  int fair_after_requeue = 0;
  for (int i = 0; i < kTries; ++i) {
    std::this_thread::sleep_for(2 * kFairnessInterval);
    {
      RecordingWaiter waiter(/*thread=*/7);
      ASSERT_TRUE(parking_lot::enqueue(&word, waiter, [] { return true; }));
      fair_after_park += UnparkIsFair(word) ? 1 : 0;
    }
    std::this_thread::sleep_for(2 * kFairnessInterval);
    {
      RecordingWaiter waiter(/*thread=*/7);
      ASSERT_TRUE(parking_lot::enqueue(&condition, waiter, [] { return true; }));
      // Left queued past the interval on the condition: that wait is not a wait for `word`.
      std::this_thread::sleep_for(2 * kFairnessInterval);
      const parking_lot::RequeueResult result = parking_lot::requeue(
          &condition, &word,
          [](std::size_t) {
            return parking_lot::RequeueDecision{true, 0, nullptr};
          },
          [](const Waiter&) { return std::optional<WakeToken>(); });
      ASSERT_EQ(result.moved, 1u);
      fair_after_requeue += UnparkIsFair(word) ? 1 : 0;
    }
  }
  EXPECT_LE(fair_after_park, kTries / 4);
  EXPECT_LE(fair_after_requeue, kTries / 4);
}

// An asynchronous waiter (a Promise wait) woken to compete competes only once its thread's event
// loop runs its callback, by which time running threads have taken what was released. If it then
// queues again at the same key, it lost, and its next turn there is due to be fair; at another key
// it is owed nothing (a condition waiter notified and then queued on its mutex did not lose there).
TEST(ParkingLotTest, AnAsynchronousWaiterWokenToCompeteIsHandedOverAtItsNextTurnThere) {
  alignas(4) std::int32_t word = 0;
  alignas(4) std::int32_t other = 0;
  RecordingWaiter waiter(/*thread=*/7);
  // Woken without a fair turn: the timer restarts at the first arrival in an idle bucket, so the
  // first unpark is nearly always unfair, and a few tries make sure of one.
  const auto pass_over_at = [&](std::int32_t& key) {
    for (int i = 0; i < 20; ++i) {
      EXPECT_TRUE(parking_lot::enqueue(&key, waiter, [] { return true; }));
      if (!UnparkIsFair(key)) return true;
      std::this_thread::sleep_for(2 * kFairnessInterval);
    }
    return false;
  };
  ASSERT_TRUE(pass_over_at(word));
  ASSERT_TRUE(parking_lot::enqueue(&word, waiter, [] { return true; }));
  EXPECT_TRUE(UnparkIsFair(word));

  // Fair at the other key only if that bucket's timer happened to be due (rarely, as above).
  int fair_elsewhere = 0;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(pass_over_at(word));
    ASSERT_TRUE(parking_lot::enqueue(&other, waiter, [] { return true; }));
    fair_elsewhere += UnparkIsFair(other) ? 1 : 0;
  }
  EXPECT_LT(fair_elsewhere, 3);

  // The override pins the policy, this rule included.
  ASSERT_TRUE(pass_over_at(word));
  const testing::FairnessOverride never(parking_lot::FairnessForTesting::kNever);
  ASSERT_TRUE(parking_lot::enqueue(&word, waiter, [] { return true; }));
  EXPECT_FALSE(UnparkIsFair(word));
}

TEST(ParkingLotTest, UnparkSomeWakesAtMostCountInArrivalOrderWithTheToken) {
  constexpr int kWaiters = 5;
  alignas(4) std::int32_t word = 0;
  std::array<ParkResult, kWaiters> results{};
  std::array<std::atomic<bool>, kWaiters> returned{};
  ThreadGroup threads;
  for (int i = 0; i < kWaiters; ++i) {
    threads.Start([&, i] {
      results[i] = parking_lot::park(
          &word, [] { return true; }, HangGuard());
      returned[i] = true;
    });
    ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(&word) == i + 1u; }));
  }

  EXPECT_EQ(parking_lot::unpark_some(&word, 2, /*token=*/7), 2u);
  EXPECT_EQ(parking_lot::queued_count(&word), 3u);
  ASSERT_TRUE(WaitUntil([&] { return returned[0] && returned[1]; }));
  for (int i = 2; i < kWaiters; ++i) EXPECT_FALSE(returned[i]) << "waiter " << i << " woke early";

  EXPECT_EQ(parking_lot::unpark_some(&word, 10, /*token=*/8), 3u);
  threads.JoinOrAbort();
  EXPECT_EQ(parking_lot::unpark_some(&word, 10, /*token=*/9), 0u);

  for (int i = 0; i < kWaiters; ++i) {
    EXPECT_EQ(results[i].status, Status::kUnparked) << "waiter " << i;
    EXPECT_EQ(results[i].token, i < 2 ? 7 : 8) << "waiter " << i;
  }
  EXPECT_EQ(parking_lot::queued_count(&word), 0u);
}

TEST(ParkingLotTest, UnparkSomeWakesMoreWaitersThanOneBatch) {
  // unpark_some dequeues in batches; asynchronous waiters let a test queue hundreds cheaply.
  constexpr int kWaiters = 200;
  alignas(4) std::int32_t word = 0;
  std::deque<RecordingWaiter> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.emplace_back(/*thread=*/i + 1);
    ASSERT_TRUE(parking_lot::enqueue(&word, waiters.back(), [] { return true; }));
  }

  EXPECT_EQ(parking_lot::unpark_some(&word, 64, /*token=*/1), 64u);
  EXPECT_EQ(parking_lot::unpark_some(&word, 100, /*token=*/2), 100u);
  EXPECT_EQ(parking_lot::queued_count(&word), 36u);
  EXPECT_EQ(parking_lot::unpark_some(&word, std::numeric_limits<std::size_t>::max(), 3), 36u);
  EXPECT_EQ(parking_lot::unpark_some(&word, 1, /*token=*/4), 0u);

  for (int i = 0; i < kWaiters; ++i) {
    ASSERT_EQ(waiters[i].wake_count(), 1u) << "waiter " << i;
    EXPECT_EQ(waiters[i].last_token(), i < 64 ? 1 : i < 164 ? 2 : 3) << "waiter " << i;
  }
  EXPECT_EQ(parking_lot::queued_count(&word), 0u);
}

TEST(ParkingLotTest, ParkTimesOutAndLeavesTheQueue) {
  alignas(4) std::int32_t word = 0;
  const auto started = Clock::now();

  const ParkResult result = parking_lot::park(
      &word, [] { return true; }, Deadline::after_ms(20));

  EXPECT_EQ(result.status, Status::kTimedOut);
  // A lower bound only: the deadline is checked against the same clock.
  EXPECT_GE(Clock::now() - started, 20ms);
  EXPECT_EQ(parking_lot::queued_count(&word), 0u);
}

TEST(ParkingLotTest, ParkWithAPassedDeadlineTimesOutAtOnce) {
  alignas(4) std::int32_t word = 0;
  EXPECT_EQ(parking_lot::park(
                &word, [] { return true; }, Deadline::after_ms(0))
                .status,
            Status::kTimedOut);
  EXPECT_EQ(parking_lot::park(
                &word, [] { return true; }, Deadline::after_ms(-5))
                .status,
            Status::kTimedOut);
  EXPECT_EQ(parking_lot::queued_count(&word), 0u);
}

TEST(ParkingLotTest, TimedOutWaiterLeavesWithoutDisturbingTheOthers) {
  alignas(4) std::int32_t word = 0;
  std::atomic<ThreadId> staying_thread{kNoThread};
  ParkResult staying_result{Status::kInvalid};
  ThreadGroup threads;
  threads.Start([&] {
    staying_thread = current_thread_id();
    staying_result = parking_lot::park(
        &word, [] { return true; }, HangGuard());
  });
  ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(&word) == 1; }));

  // Queued behind the first waiter, then removed from the tail of the list by its timeout.
  EXPECT_EQ(parking_lot::park(
                &word, [] { return true; }, Deadline::after_ms(5))
                .status,
            Status::kTimedOut);
  EXPECT_EQ(parking_lot::queued_count(&word), 1u);

  const UnparkInfo info = parking_lot::unpark_one(&word, [](const UnparkInfo&) { return 3; });
  threads.JoinOrAbort();
  EXPECT_EQ(info.thread, staying_thread.load());
  EXPECT_FALSE(info.has_more);
  EXPECT_EQ(staying_result.status, Status::kUnparked);
  EXPECT_EQ(staying_result.token, 3);
}

TEST(ParkingLotTest, RequestedInterruptEndsTheParkWithInterrupted) {
  alignas(4) std::int32_t word = 0;
  std::atomic<bool> stop{false};
  const auto stop_requested = [&] { return stop.load(); };
  const Interrupt interrupt{std::chrono::milliseconds(1), stop_requested};
  ParkResult result{Status::kInvalid};
  ThreadGroup threads;
  threads.Start([&] {
    // No deadline: only the interrupt can end this wait.
    result = with_interrupt(&interrupt, [&] {
      return parking_lot::park(
          &word, [] { return true; }, Deadline::never());
    });
  });
  ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(&word) == 1; }));

  stop = true;
  threads.JoinOrAbort(testing::kWaitLimit);

  EXPECT_EQ(result.status, Status::kInterrupted);
  EXPECT_FALSE(result.interrupted);
  EXPECT_EQ(parking_lot::queued_count(&word), 0u);
}

TEST(ParkingLotTest, PollingForAnInterruptDoesNotLoseAWakeUp) {
  alignas(4) std::int32_t word = 0;
  const auto never_requested = [] { return false; };
  const Interrupt interrupt{std::chrono::microseconds(200), never_requested};
  ParkResult result{Status::kInvalid};
  ThreadGroup threads;
  threads.Start([&] {
    result = with_interrupt(&interrupt, [&] {
      return parking_lot::park(
          &word, [] { return true; }, HangGuard());
    });
  });
  ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(&word) == 1; }));
  std::this_thread::sleep_for(2ms);  // let it go through a few polls (not needed for correctness)

  EXPECT_EQ(parking_lot::unpark_some(&word, 1, /*token=*/11), 1u);
  threads.JoinOrAbort();

  EXPECT_EQ(result.status, Status::kUnparked);
  EXPECT_EQ(result.token, 11);
}

TEST(ParkingLotTest, InterruptRequestedAfterAWakerDequeuedTheWaiterStillDeliversTheToken) {
  // Forces the race deterministically: `requested` is called by the parked thread, while it is
  // still queued, and does not answer until the main thread has unparked it.
  alignas(4) std::int32_t word = 0;
  std::atomic<bool> polling{false};
  std::atomic<bool> unparked{false};
  const auto requested_after_unpark = [&] {
    polling = true;
    EXPECT_TRUE(WaitUntil([&] { return unparked.load(); }));
    return true;
  };
  const Interrupt interrupt{std::chrono::milliseconds(1), requested_after_unpark};
  ParkResult result{Status::kInvalid};
  ThreadGroup threads;
  threads.Start([&] {
    result = with_interrupt(&interrupt, [&] {
      return parking_lot::park(
          &word, [] { return true; }, Deadline::never());
    });
  });
  ASSERT_TRUE(WaitUntil([&] { return polling.load(); }));

  EXPECT_TRUE(parking_lot::unpark_one(&word, [](const UnparkInfo&) { return 5; }).unparked);
  unparked = true;
  threads.JoinOrAbort();

  // The waiter had been dequeued, so it must report the wake-up and its token, flagged so the
  // primitive can pass the token on before giving up.
  EXPECT_EQ(result.status, Status::kUnparked);
  EXPECT_EQ(result.token, 5);
  EXPECT_TRUE(result.interrupted);
  EXPECT_EQ(parking_lot::queued_count(&word), 0u);
}

TEST(ParkingLotTest, AsyncWaiterCancelledWhileQueuedIsNeverWoken) {
  alignas(4) std::int32_t word = 0;
  RecordingWaiter waiter;
  ASSERT_TRUE(parking_lot::enqueue(&word, waiter, [] { return true; }));
  EXPECT_EQ(waiter.address(), &word);
  EXPECT_EQ(parking_lot::queued_count(&word), 1u);

  EXPECT_TRUE(parking_lot::cancel(waiter));

  EXPECT_EQ(parking_lot::queued_count(&word), 0u);
  EXPECT_FALSE(parking_lot::unpark_one(&word, [](const UnparkInfo&) { return 1; }).unparked);
  EXPECT_EQ(waiter.wake_count(), 0u);
}

TEST(ParkingLotTest, AsyncWaiterCancelledAfterUnparkGetsTheWakeExactlyOnce) {
  alignas(4) std::int32_t word = 0;
  RecordingWaiter waiter(/*thread=*/42);
  ASSERT_TRUE(parking_lot::enqueue(&word, waiter, [] { return true; }));

  const UnparkInfo info = parking_lot::unpark_one(&word, [](const UnparkInfo&) { return 42; });
  EXPECT_TRUE(info.unparked);
  EXPECT_EQ(info.thread, 42);

  EXPECT_FALSE(parking_lot::cancel(waiter));
  ASSERT_TRUE(waiter.WaitForWakes(1));
  EXPECT_EQ(waiter.tokens(), std::vector<WakeToken>{42});
  // Delivered by the waker (here, this thread), not by some thread of the lot's own.
  EXPECT_EQ(waiter.last_waker(), std::this_thread::get_id());
}

TEST(ParkingLotTest, WakeCallbackMayCallBackIntoTheLot) {
  // on_unparked runs with no bucket lock held; if it did, the nested unpark_one on the same
  // address (same bucket) would deadlock and the thread group would abort.
  alignas(4) std::int32_t word = 0;
  RecordingWaiter first(/*thread=*/1);
  RecordingWaiter second(/*thread=*/2);
  first.set_on_wake([&](WakeToken token) {
    parking_lot::unpark_one(&word, [token](const UnparkInfo&) { return token + 1; });
  });
  ASSERT_TRUE(parking_lot::enqueue(&word, first, [] { return true; }));
  ASSERT_TRUE(parking_lot::enqueue(&word, second, [] { return true; }));

  ThreadGroup threads;
  threads.Start([&] { parking_lot::unpark_one(&word, [](const UnparkInfo&) { return 10; }); });
  threads.JoinOrAbort(testing::kWaitLimit);

  EXPECT_EQ(first.tokens(), std::vector<WakeToken>{10});
  EXPECT_EQ(second.tokens(), std::vector<WakeToken>{11});
  EXPECT_EQ(parking_lot::queued_count(&word), 0u);
}

TEST(ParkingLotTest, CancelRacingUnparkDeliversEachWakeExactlyOnceOrNotAtAll) {
  constexpr int kCancellers = 2;
  constexpr int kWakers = 2;
  constexpr int kWaitersPerCanceller = 3000;
  alignas(4) std::int32_t word = 0;
  // Every waiter stays alive until the end, so a wake-up delivered after a successful cancel (or
  // twice) would be recorded and caught below rather than written into freed memory.
  std::array<std::deque<RecordingWaiter>, kCancellers> waiters;
  std::array<std::vector<bool>, kCancellers> cancelled;
  // Tokens are issued only to dequeued waiters and are consecutive, so the delivered ones must be
  // exactly 1 .. next_token - 1, each once.
  std::atomic<WakeToken> next_token{1};
  std::atomic<int> cancellers_running{kCancellers};

  ThreadGroup threads;
  for (int c = 0; c < kCancellers; ++c) {
    threads.Start([&, c] {
      for (int i = 0; i < kWaitersPerCanceller; ++i) {
        RecordingWaiter& waiter = waiters[c].emplace_back(current_thread_id());
        ASSERT_TRUE(parking_lot::enqueue(&word, waiter, [] { return true; }));
        // Vary how long the waiter stays queued so cancels land before, during and after wakes.
        for (int spin = 0; spin < i % 4; ++spin) std::this_thread::yield();
        const bool was_cancelled = parking_lot::cancel(waiter);
        cancelled[c].push_back(was_cancelled);
        // A waiter a waker took must still get its wake-up; wait for it before moving on, as
        // the owner of a real waiter would before freeing it.
        if (!was_cancelled) {
          ASSERT_TRUE(waiter.WaitForWakes(1)) << "a dequeued waiter was not woken";
        }
      }
      --cancellers_running;
    });
  }
  for (int w = 0; w < kWakers; ++w) {
    threads.Start([&] {
      while (cancellers_running > 0) {
        const UnparkInfo info = parking_lot::unpark_one(&word, [&](const UnparkInfo& found) {
          return found.unparked ? next_token.fetch_add(1) : WakeToken{0};
        });
        if (!info.unparked) std::this_thread::yield();
      }
    });
  }
  threads.JoinOrAbort();

  std::vector<WakeToken> received;
  int woken = 0;
  for (int c = 0; c < kCancellers; ++c) {
    ASSERT_EQ(waiters[c].size(), cancelled[c].size());
    for (std::size_t i = 0; i < waiters[c].size(); ++i) {
      const std::vector<WakeToken> tokens = waiters[c][i].tokens();
      if (cancelled[c][i]) {
        EXPECT_TRUE(tokens.empty()) << "cancelled waiter " << c << "/" << i << " was also woken";
      } else {
        ASSERT_EQ(tokens.size(), 1u)
            << "waiter " << c << "/" << i << " woken " << tokens.size() << " times";
        received.push_back(tokens[0]);
        ++woken;
      }
    }
  }
  std::sort(received.begin(), received.end());
  std::vector<WakeToken> expected(next_token.load() - 1);
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<WakeToken>(i + 1);
  EXPECT_EQ(received, expected) << "a token was lost or delivered twice";
  // Both outcomes must actually have happened, or the race was not exercised.
  EXPECT_GT(woken, 0);
  EXPECT_LT(woken, kCancellers * kWaitersPerCanceller);
  EXPECT_EQ(parking_lot::queued_count(&word), 0u);
}

TEST(ParkingLotTest, ParkTimeoutRacingUnparkNeverLosesAToken) {
  // The synchronous counterpart: a park whose deadline expires as a waker dequeues it must
  // return kUnparked with that token, never kTimedOut having swallowed it.
  constexpr int kParkers = 2;
  constexpr int kParksPerThread = 1500;
  alignas(4) std::int32_t word = 0;
  std::array<std::vector<WakeToken>, kParkers> received;
  std::array<int, kParkers> timeouts{};
  std::atomic<WakeToken> next_token{1};
  std::atomic<int> parkers_running{kParkers};

  ThreadGroup threads;
  for (int p = 0; p < kParkers; ++p) {
    threads.Start([&, p] {
      for (int i = 0; i < kParksPerThread; ++i) {
        const double timeout_ms = (i % 3) * 0.02;  // 0, 20 us, 40 us
        const ParkResult result = parking_lot::park(
            &word, [] { return true; }, Deadline::after_ms(timeout_ms));
        if (result.status == Status::kUnparked) {
          received[p].push_back(result.token);
        } else {
          ASSERT_EQ(result.status, Status::kTimedOut);
          ++timeouts[p];
        }
      }
      --parkers_running;
    });
  }
  threads.Start([&] {
    while (parkers_running > 0) {
      const UnparkInfo info = parking_lot::unpark_one(&word, [&](const UnparkInfo& found) {
        return found.unparked ? next_token.fetch_add(1) : WakeToken{0};
      });
      if (!info.unparked) std::this_thread::yield();
    }
  });
  threads.JoinOrAbort();

  std::vector<WakeToken> all_received;
  for (const auto& tokens : received) {
    all_received.insert(all_received.end(), tokens.begin(), tokens.end());
  }
  std::sort(all_received.begin(), all_received.end());
  std::vector<WakeToken> expected(next_token.load() - 1);
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<WakeToken>(i + 1);
  EXPECT_EQ(all_received, expected) << "a token was lost or delivered twice";
  EXPECT_EQ(all_received.size() + timeouts[0] + timeouts[1],
            std::size_t{kParkers * kParksPerThread});
  EXPECT_EQ(parking_lot::queued_count(&word), 0u);
}

TEST(ParkingLotTest, WakingOneAddressLeavesTheWaitersOfAnotherAlone) {
  alignas(4) std::int32_t words[3] = {};
  std::array<std::atomic<ThreadId>, 2> thread_ids{};
  std::array<std::atomic<bool>, 2> returned{};
  ThreadGroup threads;
  for (int i = 0; i < 2; ++i) {
    threads.Start([&, i] {
      thread_ids[i] = current_thread_id();
      parking_lot::park(
          &words[i], [] { return true; }, HangGuard());
      returned[i] = true;
    });
    ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(&words[i]) == 1; }));
  }

  EXPECT_EQ(parking_lot::unpark_some(&words[2], 10, 0), 0u);
  const UnparkInfo first = parking_lot::unpark_one(&words[0], [](const UnparkInfo&) { return 0; });
  EXPECT_EQ(first.thread, thread_ids[0].load());
  EXPECT_FALSE(first.has_more) << "a waiter of another address was counted";
  ASSERT_TRUE(WaitUntil([&] { return returned[0].load(); }));
  EXPECT_FALSE(returned[1]);
  EXPECT_EQ(parking_lot::queued_count(&words[1]), 1u);

  const UnparkInfo second = parking_lot::unpark_one(&words[1], [](const UnparkInfo&) { return 0; });
  EXPECT_EQ(second.thread, thread_ids[1].load());
  threads.JoinOrAbort();
}

TEST(ParkingLotTest, AddressesSharingABucketKeepSeparateFifoQueues) {
  // More addresses than the lot has buckets, so by pigeonhole many share a bucket (and its list)
  // whatever the hash; interleaving their waiters checks that every operation filters by address.
  constexpr int kAddresses = 4096;
  std::vector<std::int32_t> words(kAddresses);
  std::deque<RecordingWaiter> first;
  std::deque<RecordingWaiter> second;
  const auto always = [] { return true; };
  for (int i = 0; i < kAddresses; ++i) {
    first.emplace_back(/*thread=*/1 + i);
    ASSERT_TRUE(parking_lot::enqueue(&words[i], first.back(), always));
  }
  for (int i = 0; i < kAddresses; ++i) {
    second.emplace_back(/*thread=*/1 + kAddresses + i);
    ASSERT_TRUE(parking_lot::enqueue(&words[i], second.back(), always));
  }
  for (int i = 0; i < kAddresses; ++i) {
    ASSERT_EQ(parking_lot::queued_count(&words[i]), 2u) << "address " << i;
  }

  // Cancel the first waiter of every third address: its second waiter becomes the head.
  for (int i = 0; i < kAddresses; i += 3) ASSERT_TRUE(parking_lot::cancel(first[i]));

  // Wake in reverse order, so the order of the bucket lists and the order of wakes differ.
  for (int i = kAddresses - 1; i >= 0; --i) {
    const bool head_cancelled = i % 3 == 0;
    const UnparkInfo info =
        parking_lot::unpark_one(&words[i], [i](const UnparkInfo&) { return WakeToken{i}; });
    ASSERT_TRUE(info.unparked) << "address " << i;
    EXPECT_EQ(info.thread, head_cancelled ? 1 + kAddresses + i : 1 + i) << "address " << i;
    EXPECT_EQ(info.has_more, !head_cancelled) << "address " << i;
  }
  for (int i = 0; i < kAddresses; ++i) {
    EXPECT_EQ(parking_lot::unpark_some(&words[i], 5, WakeToken{-i}), i % 3 == 0 ? 0u : 1u);
  }

  for (int i = 0; i < kAddresses; ++i) {
    ASSERT_EQ(parking_lot::queued_count(&words[i]), 0u) << "address " << i;
    if (i % 3 == 0) {
      EXPECT_EQ(first[i].wake_count(), 0u) << "address " << i;
      EXPECT_EQ(second[i].tokens(), std::vector<WakeToken>{i}) << "address " << i;
    } else {
      EXPECT_EQ(first[i].tokens(), std::vector<WakeToken>{i}) << "address " << i;
      EXPECT_EQ(second[i].tokens(), std::vector<WakeToken>{-i}) << "address " << i;
    }
  }
}

}  // namespace
}  // namespace parklock

namespace parklock {
namespace {

TEST(ParkingLotLeaveTest, ATimedOutWaiterRunsItsGrantInTheCriticalSectionOfItsDeparture) {
  alignas(4) std::int32_t word = 0;
  RecordingWaiter behind;
  int finishes = 0;
  bool saw_empty = true;
  const auto grant_everyone = [](std::int64_t) -> std::optional<WakeToken> { return 7; };
  const FunctionRef<std::optional<WakeToken>(std::int64_t)> offer = grant_everyone;
  const auto finish = [&](bool queue_empty) {
    ++finishes;
    saw_empty = queue_empty;
    // Under the bucket lock: nobody can queue (or wake) anything on this key meanwhile.
    EXPECT_EQ(word, 0);
  };
  const parking_lot::Grant on_leave{&offer, finish};

  testing::ThreadGroup threads;
  ParkResult result{ParkResult::Status::kInvalid};
  threads.Start([&] {
    parking_lot::ParkOptions options;
    options.deadline = Deadline::after_ms(20);
    options.on_leave = &on_leave;
    result = parking_lot::park(
        &word, [] { return true; }, options);
  });
  testing::WaitUntil([&] { return parking_lot::queued_count(&word) == 1; });
  ASSERT_TRUE(parking_lot::enqueue(&word, behind, [] { return true; }));
  threads.JoinOrAbort();

  EXPECT_EQ(result.status, ParkResult::Status::kTimedOut);
  EXPECT_EQ(finishes, 1);
  EXPECT_TRUE(saw_empty) << "the waiter behind was granted in the same step";
  ASSERT_TRUE(behind.WaitForWakes(1));
  EXPECT_EQ(behind.last_token(), 7);
  EXPECT_EQ(parking_lot::queued_count(&word), 0u);
}

TEST(ParkingLotLeaveTest, CancelRunsTheGrantForTheKeyTheWaiterWasFoundOn) {
  alignas(4) std::int32_t from = 0;
  alignas(4) std::int32_t to = 0;
  RecordingWaiter moved;
  ASSERT_TRUE(parking_lot::enqueue(&from, moved, [] { return true; }));
  parking_lot::requeue(
      &from, &to,
      [](std::size_t) {
        return parking_lot::RequeueDecision{true, 0, nullptr};
      },
      [](const Waiter&) { return std::optional<WakeToken>(); });
  ASSERT_EQ(parking_lot::queued_count(&to), 1u);

  const void* seen_key = nullptr;
  bool seen_empty = false;
  const auto finish = [&](bool queue_empty) { seen_empty = queue_empty; };
  const parking_lot::Grant on_leave{nullptr, finish};
  ASSERT_TRUE(parking_lot::cancel(moved, [&](const void* key) {
    seen_key = key;
    return &on_leave;
  }));
  EXPECT_EQ(seen_key, &to);
  EXPECT_TRUE(seen_empty);
  EXPECT_EQ(moved.wake_count(), 0u);
}

TEST(ParkingLotLeaveTest, RequeueWakesTheWaitersItsChoiceNamesWithTheirTokens) {
  alignas(4) std::int32_t from = 0;
  alignas(4) std::int32_t to = 0;
  RecordingWaiter before;
  ASSERT_TRUE(parking_lot::enqueue(&from, before, [] { return true; }));
  ParkResult blocked{ParkResult::Status::kInvalid};
  ThreadGroup threads;
  threads.Start([&] {
    blocked = parking_lot::park(
        &from, [] { return true; }, HangGuard());
  });
  ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(&from) == 2u; }));
  RecordingWaiter after;
  ASSERT_TRUE(parking_lot::enqueue(&from, after, [] { return true; }));
  RecordingWaiter last;
  ASSERT_TRUE(parking_lot::enqueue(&from, last, [] { return true; }));

  // Asked oldest first: the first asynchronous waiter is woken with 4, the next with 5, the last
  // is moved, and so is the blocked thread.
  WakeToken next_token = 4;
  const parking_lot::RequeueResult result = parking_lot::requeue(
      &from, &to,
      [](std::size_t waiting) {
        EXPECT_EQ(waiting, 4u);
        return parking_lot::RequeueDecision{true, 9, nullptr};
      },
      [&](const Waiter& waiter) -> std::optional<WakeToken> {
        if (waiter.blocking() || next_token > 5) return std::nullopt;
        return next_token++;
      });
  EXPECT_EQ(result.woken, 2u);
  EXPECT_EQ(result.moved, 2u);
  ASSERT_TRUE(before.WaitForWakes(1));
  ASSERT_TRUE(after.WaitForWakes(1));
  EXPECT_EQ(before.last_token(), 4);
  EXPECT_EQ(after.last_token(), 5);
  EXPECT_EQ(parking_lot::queued_count(&from), 0u);
  ASSERT_EQ(parking_lot::queued_count(&to), 2u) << "the blocked thread and the last were moved";

  EXPECT_TRUE(
      parking_lot::unpark_one(&to, [](const UnparkInfo&) { return WakeToken{6}; }).unparked);
  threads.JoinOrAbort();
  EXPECT_EQ(blocked.status, ParkResult::Status::kUnparked);
  EXPECT_EQ(blocked.token, 6);
  EXPECT_TRUE(parking_lot::cancel(last));
}

TEST(ParkingLotLeaveTest, RequeueThatDoesNotMoveWakesEveryWaiterWithTheDecisionsToken) {
  alignas(4) std::int32_t from = 0;
  alignas(4) std::int32_t to = 0;
  RecordingWaiter a;
  RecordingWaiter b;
  ASSERT_TRUE(parking_lot::enqueue(&from, a, [] { return true; }));
  ASSERT_TRUE(parking_lot::enqueue(&from, b, [] { return true; }));
  const parking_lot::RequeueResult result = parking_lot::requeue(
      &from, &to,
      [](std::size_t) {
        return parking_lot::RequeueDecision{false, 9, nullptr};
      },
      [](const Waiter&) -> std::optional<WakeToken> {
        ADD_FAILURE() << "asked only when waiters move";
        return std::nullopt;
      });
  EXPECT_EQ(result.woken, 2u);
  EXPECT_EQ(result.moved, 0u);
  for (RecordingWaiter* waiter : {&a, &b}) {
    ASSERT_TRUE(waiter->WaitForWakes(1));
    EXPECT_EQ(waiter->last_token(), 9);
  }
  EXPECT_EQ(parking_lot::queued_count(&to), 0u);
}

TEST(ParkingLotLeaveTest, UnparkFilterGrantsInOrderUntilTheFirstRefusal) {
  alignas(4) std::int32_t word = 0;
  RecordingWaiter a;
  RecordingWaiter b;
  RecordingWaiter c;
  for (RecordingWaiter* w : {&a, &b, &c}) {
    ASSERT_TRUE(parking_lot::enqueue(&word, *w, [] { return true; }));
  }
  int offered = 0;
  const auto two = [&](std::int64_t) -> std::optional<WakeToken> {
    if (++offered > 2) return std::nullopt;
    return offered;
  };
  const FunctionRef<std::optional<WakeToken>(std::int64_t)> offer = two;
  bool empty = true;
  const auto finish = [&](bool queue_empty) { empty = queue_empty; };
  EXPECT_EQ(parking_lot::unpark_filter(&word, parking_lot::Grant{&offer, finish}), 2u);
  EXPECT_FALSE(empty);
  EXPECT_EQ(a.last_token(), 1);
  EXPECT_EQ(b.last_token(), 2);
  EXPECT_EQ(c.wake_count(), 0u);
  EXPECT_TRUE(parking_lot::cancel(c));
}

}  // namespace
}  // namespace parklock

namespace parklock {
namespace {

TEST(ParkingLotSnapshotTest, ListsEveryQueuedWaiterOnceWithItsSiteHolderAndKind) {
  alignas(4) std::int32_t mutex_word = 0;
  MutexWord mutex(&mutex_word);
  const ThreadId self = current_thread_id();
  ASSERT_EQ(mutex.lock(self), LockStatus::kAcquired);
  testing::RecordingWaiter async_waiter(/*thread=*/12345);
  ASSERT_EQ(mutex.lock_or_enqueue(12345, async_waiter, false), Outcome::kPending);
  testing::ThreadGroup threads;
  std::atomic<ThreadId> blocked{kNoThread};
  threads.Start([&] {
    blocked = current_thread_id();
    EXPECT_EQ(mutex.lock(blocked, Deadline::after_ms(testing::kHangGuardMs)),
              LockStatus::kAcquired);
    mutex.unlock(blocked);
  });
  ASSERT_TRUE(testing::WaitUntil([&] { return parking_lot::queued_count(&mutex_word) == 2; }));

  std::vector<parking_lot::QueuedWaiter> mine;
  for (parking_lot::QueuedWaiter& w : parking_lot::snapshot()) {
    if (w.address == &mutex_word) mine.push_back(std::move(w));
  }
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(mine[0].thread, 12345);
  EXPECT_FALSE(mine[0].blocking);
  EXPECT_EQ(mine[1].thread, blocked.load());
  EXPECT_TRUE(mine[1].blocking);
  for (const auto& w : mine) {
    ASSERT_NE(w.site, nullptr);
    EXPECT_STREQ(w.site->kind, "mutex");
    EXPECT_EQ(w.holder, self);
    EXPECT_LE(w.since, Clock::now());
  }

  ASSERT_TRUE(mutex.cancel(async_waiter));
  mutex.unlock(self);
  threads.JoinOrAbort();
}

TEST(ParkingLotSnapshotTest, FutexWaitersReportTheWordNotTheirKey) {
  alignas(4) std::int32_t word = 0;
  testing::RecordingWaiter waiter;
  ASSERT_TRUE(futex::enqueue_if_equal(&word, 0, waiter));
  bool found = false;
  for (const parking_lot::QueuedWaiter& w : parking_lot::snapshot()) {
    if (w.key != futex::key(&word)) continue;
    found = true;
    EXPECT_EQ(w.address, &word);
    EXPECT_STREQ(w.site->kind, "futex");
    EXPECT_EQ(w.holder, kNoThread);
  }
  EXPECT_TRUE(found);
  EXPECT_TRUE(parking_lot::cancel(waiter));
}

}  // namespace
}  // namespace parklock
