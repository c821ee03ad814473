// Tests of the reusable barrier (barrier.h) with real threads: the state transitions, exactly one
// leader and no early pass in every generation, withdrawal on timeout (and the timeout that loses
// to the completion counting as passed), interrupts, uninitialized and corrupt words, generation
// wrap-around, the one arrive step run as a Promise wait and blocking, and the self-contained
// Barrier class.
#include "primitives/barrier.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
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
using ArriveStatus = BarrierWord::ArriveStatus;

// A deadline for waits that should complete: a lost wake-up then ends as kTimedOut, a readable
// failure, instead of hanging the suite.
Deadline HangGuard() {
  return Deadline::after_ms(kHangGuardMs);
}

constexpr std::int32_t State(std::uint32_t generation, std::int32_t arrived) {
  return static_cast<std::int32_t>(generation << BarrierWord::kGenerationShift) | arrived;
}

class BarrierWordTest : public ::testing::Test {
 protected:
  std::int32_t state() { return atomic_ref<std::int32_t>(words_[0]).load(); }
  std::int32_t parties_word() { return atomic_ref<std::int32_t>(words_[1]).load(); }
  void set_words(std::int32_t state, std::int32_t parties) {
    atomic_ref<std::int32_t>(words_[0]).store(state);
    atomic_ref<std::int32_t>(words_[1]).store(parties);
  }
  std::size_t queued() { return futex::queued_count(barrier_.address()); }

  alignas(BarrierWord::kAlign) std::int32_t words_[BarrierWord::kWordCount] = {};
  BarrierWord barrier_{words_};
};

TEST_F(BarrierWordTest, ArrivalsCountUpAndTheLastMovesToTheNextGeneration) {
  barrier_.init(3);
  EXPECT_EQ(state(), 0);
  EXPECT_EQ(parties_word(), 3);

  auto arrival = barrier_.arrive();
  EXPECT_EQ(arrival.status, ArriveStatus::kJoined);
  EXPECT_EQ(arrival.generation, 0u);
  EXPECT_EQ(state(), State(0, 1));
  arrival = barrier_.arrive();
  EXPECT_EQ(arrival.status, ArriveStatus::kJoined);
  EXPECT_EQ(state(), State(0, 2));
  arrival = barrier_.arrive();
  EXPECT_EQ(arrival.status, ArriveStatus::kLast);
  EXPECT_EQ(arrival.generation, 0u);
  EXPECT_EQ(state(), State(1, 0)) << "generation 1, nobody arrived";
  EXPECT_EQ(queued(), 0u);
}

TEST_F(BarrierWordTest, OnePartyLeadsEveryGeneration) {
  barrier_.init(1);
  for (std::uint32_t generation = 0; generation < 5; ++generation) {
    EXPECT_EQ(barrier_.arrive_and_wait(Deadline::never()), Outcome::kLeader);
    EXPECT_EQ(state(), State(generation + 1, 0));
  }
}

TEST_F(BarrierWordTest, TheGenerationWrapsAroundAfter65535) {
  set_words(State(0xFFFF, 0), 2);
  BarrierWord::ArriveStep step(barrier_);
  PromiseWait waiting(step);
  ASSERT_EQ(waiting.Start(), Outcome::kPending);
  auto arrival = barrier_.arrive();
  EXPECT_EQ(arrival.status, ArriveStatus::kLast);
  EXPECT_EQ(arrival.generation, 0xFFFFu);
  EXPECT_EQ(state(), 0) << "generation 65535 is followed by generation 0";
  EXPECT_EQ(waiting.Settle(), Outcome::kAcquired) << "generation 65535 has passed";
}

TEST_F(BarrierWordTest, LeaveWithdrawsOnlyWhileTheGenerationIsCurrent) {
  barrier_.init(3);
  const auto first = barrier_.arrive();
  const auto second = barrier_.arrive();
  ASSERT_EQ(second.status, ArriveStatus::kJoined);
  EXPECT_TRUE(barrier_.leave(second.generation));
  EXPECT_EQ(state(), State(0, 1)) << "the withdrawn party is no longer counted";

  // Two more arrivals complete generation 0 (the withdrawn one was not counted).
  EXPECT_EQ(barrier_.arrive().status, ArriveStatus::kJoined);
  EXPECT_EQ(barrier_.arrive().status, ArriveStatus::kLast);
  EXPECT_EQ(state(), State(1, 0));
  // A timeout that loses the race with the completion: the party has passed.
  EXPECT_FALSE(barrier_.leave(first.generation));
  EXPECT_EQ(state(), State(1, 0)) << "a late leave changes nothing";
}

TEST_F(BarrierWordTest, ALeaveThatFindsNobodyArrivedInItsGenerationNumberChangesNothing) {
  // Only reachable after the generation wrapped around while the leaver stalled (see the header).
  set_words(State(7, 0), 2);
  EXPECT_FALSE(barrier_.leave(7));
  EXPECT_EQ(state(), State(7, 0));
}

TEST_F(BarrierWordTest, ZeroedMemoryIsUninitializedAndChangesNothing) {
  EXPECT_EQ(barrier_.arrive().status, ArriveStatus::kUninitialized);
  EXPECT_EQ(barrier_.arrive_and_wait(), Outcome::kCorrupt) << "no deadline: must not hang";
  EXPECT_EQ(state(), 0);
  EXPECT_EQ(parties_word(), 0);
  EXPECT_EQ(queued(), 0u);
}

TEST_F(BarrierWordTest, CorruptWordsAreReportedAndLeftAlone) {
  const std::int32_t cases[][2] = {
      {0, -1},                    // negative parties
      {0, 65536},                 // more parties than the arrived field holds
      {State(3, 2), 2},           // arrived == parties: never written
      {State(3, 0xFFFF), 65535},  // arrived == parties at the largest size
      {State(3, 9), 4},           // arrived > parties
  };
  for (const auto& [bad_state, bad_parties] : cases) {
    set_words(bad_state, bad_parties);
    EXPECT_EQ(barrier_.arrive().status, ArriveStatus::kCorrupt) << bad_state << ", " << bad_parties;
    EXPECT_EQ(barrier_.arrive_and_wait(), Outcome::kCorrupt);
    EXPECT_EQ(state(), bad_state);
    EXPECT_EQ(parties_word(), bad_parties);
    EXPECT_EQ(queued(), 0u);
  }
}

TEST_F(BarrierWordTest, ATimedOutWaiterWithdrawsSoTheNextGenerationIsExact) {
  barrier_.init(2);
  EXPECT_EQ(barrier_.arrive_and_wait(Deadline::after_ms(0)), Outcome::kTimedOut);
  EXPECT_EQ(state(), State(0, 0)) << "withdrawn: generation 0, nobody arrived";
  EXPECT_EQ(barrier_.arrive_and_wait(Deadline::after_ms(20)), Outcome::kTimedOut);
  EXPECT_EQ(state(), State(0, 0));
  EXPECT_EQ(queued(), 0u);

  // Had either timed-out arrival stood, the next arrival would complete the generation alone.
  std::atomic<int> leaders{0};
  std::atomic<int> passed{0};
  ThreadGroup threads;
  for (int i = 0; i < 2; ++i) {
    threads.Start([&] {
      switch (barrier_.arrive_and_wait(HangGuard())) {
        case Outcome::kLeader:
          leaders.fetch_add(1);
          break;
        case Outcome::kAcquired:
          passed.fetch_add(1);
          break;
        default:
          break;
      }
    });
  }
  threads.JoinOrAbort();
  EXPECT_EQ(leaders.load(), 1);
  EXPECT_EQ(passed.load(), 1);
  EXPECT_EQ(state(), State(1, 0));
}

TEST_F(BarrierWordTest, AWaiterBlockedWhileOthersArriveIsReleasedByTheLastOnly) {
  barrier_.init(3);
  Outcome outcome = Outcome::kTimedOut;
  ThreadGroup threads;
  threads.Start([&] { outcome = barrier_.arrive_and_wait(HangGuard()); });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 1; }));
  EXPECT_EQ(barrier_.arrive().status, ArriveStatus::kJoined);
  // The second arrival changed the word, but wakes nobody.
  std::this_thread::sleep_for(5ms);
  EXPECT_EQ(queued(), 1u);
  EXPECT_EQ(barrier_.arrive().status, ArriveStatus::kLast);
  threads.JoinOrAbort();
  EXPECT_EQ(outcome, Outcome::kAcquired);
  EXPECT_EQ(queued(), 0u);
}

TEST_F(BarrierWordTest, AnInterruptedWaiterKeepsItsArrivalAndLeavesNoWaiter) {
  barrier_.init(2);
  std::atomic<bool> stop{false};
  const auto stop_requested = [&] { return stop.load(); };
  const Interrupt interrupt{std::chrono::milliseconds(1), stop_requested};
  Outcome outcome = Outcome::kLeader;
  ThreadGroup threads;
  threads.Start([&] {
    outcome =
        with_interrupt(&interrupt, [&] { return barrier_.arrive_and_wait(Deadline::never()); });
  });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 1; }));
  stop = true;
  threads.JoinOrAbort(testing::kWaitLimit);
  EXPECT_EQ(outcome, Outcome::kInterrupted);
  EXPECT_EQ(queued(), 0u);
  EXPECT_EQ(state(), State(0, 1)) << "the interrupted party's arrival stands";
  EXPECT_EQ(barrier_.arrive_and_wait(), Outcome::kLeader);
  EXPECT_EQ(state(), State(1, 0));
}

// Every party writes its slot of the generation, passes the barrier, and then checks that every
// slot of that generation is written: nobody passes before all have arrived, and what they wrote
// before arriving is visible (plain memory: ThreadSanitizer checks the ordering).
TEST_F(BarrierWordTest, ManyGenerationsExactlyOneLeaderEachAndNobodyPassesEarly) {
  constexpr int kParties = 4;
  constexpr int kGenerations = 1000;
  barrier_.init(kParties);
  std::vector<std::array<int, kParties>> slots(kGenerations);
  std::vector<std::atomic<int>> leaders(kGenerations);
  std::atomic<int> early{0};
  std::atomic<int> failed{0};
  ThreadGroup threads;
  for (int party = 0; party < kParties; ++party) {
    threads.Start([&, party] {
      for (int g = 0; g < kGenerations; ++g) {
        slots[g][party] = g + 1;
        switch (barrier_.arrive_and_wait(HangGuard())) {
          case Outcome::kLeader:
            leaders[g].fetch_add(1);
            break;
          case Outcome::kAcquired:
            break;
          default:
            failed.fetch_add(1);
            return;
        }
        for (int slot : slots[g]) {
          if (slot != g + 1) early.fetch_add(1);
        }
      }
    });
  }
  threads.JoinOrAbort();
  ASSERT_EQ(failed.load(), 0);
  EXPECT_EQ(early.load(), 0);
  for (int g = 0; g < kGenerations; ++g) ASSERT_EQ(leaders[g].load(), 1) << "generation " << g;
  EXPECT_EQ(state(), State(kGenerations, 0));
  EXPECT_EQ(queued(), 0u);
}

// Parties that time out (deadlines of a few microseconds) withdraw and arrive again. Each
// generation must still hold one arrival of every party, so every party passes each of its rounds
// with all the others, and each generation has one leader.
TEST_F(BarrierWordTest, TimeoutsAndRetriesKeepEveryGenerationExact) {
  constexpr int kParties = 3;
  constexpr int kRounds = 300;
  barrier_.init(kParties);
  std::vector<std::array<int, kParties>> slots(kRounds);
  std::vector<std::atomic<int>> leaders(kRounds);
  std::atomic<int> early{0};
  std::atomic<int> failed{0};
  std::atomic<int> timeouts{0};
  ThreadGroup threads;
  for (int party = 0; party < kParties; ++party) {
    threads.Start([&, party] {
      const auto limit = Clock::now() + testing::kWaitLimit;
      for (int round = 0; round < kRounds; ++round) {
        slots[round][party] = round + 1;
        Outcome outcome = Outcome::kTimedOut;
        while (outcome == Outcome::kTimedOut && Clock::now() < limit) {
          // One party per round has no patience at all: it withdraws and arrives again at once.
          const auto patience = std::chrono::microseconds(
              (party + round) % kParties == 0 ? 0 : (party * 7 + round) % 20);
          outcome = barrier_.arrive_and_wait(Deadline::at(Clock::now() + patience));
          if (outcome == Outcome::kTimedOut) timeouts.fetch_add(1);
        }
        if (outcome == Outcome::kLeader) {
          leaders[round].fetch_add(1);
        } else if (outcome != Outcome::kAcquired) {
          failed.fetch_add(1);
          return;
        }
        for (int slot : slots[round]) {
          if (slot != round + 1) early.fetch_add(1);
        }
      }
    });
  }
  threads.JoinOrAbort();
  ASSERT_EQ(failed.load(), 0);
  EXPECT_EQ(early.load(), 0);
  for (int round = 0; round < kRounds; ++round) {
    ASSERT_EQ(leaders[round].load(), 1) << "round " << round;
  }
  EXPECT_EQ(state(), State(kRounds, 0));
  EXPECT_EQ(queued(), 0u);
  RecordProperty("timeouts", timeouts.load());
}

// With more threads than parties, a generation is whoever arrives: the arrivals still group into
// complete generations, one leader each. (A thread can then be left waiting in a generation that
// no thread still running will complete, so this thread fills the last one with arrive().)
TEST_F(BarrierWordTest, MoreThreadsThanPartiesFormWholeGenerations) {
  constexpr int kParties = 3;
  constexpr int kThreads = 6;
  constexpr int kTargetPasses = 1500;
  barrier_.init(kParties);
  std::atomic<int> passes{0};
  std::atomic<int> leaders{0};
  std::atomic<int> failed{0};
  std::atomic<int> running{kThreads};
  ThreadGroup threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.Start([&] {
      while (passes.load() < kTargetPasses) {
        const Outcome outcome = barrier_.arrive_and_wait(HangGuard());
        if (outcome == Outcome::kLeader) {
          leaders.fetch_add(1);
        } else if (outcome != Outcome::kAcquired) {
          failed.fetch_add(1);
          break;
        }
        passes.fetch_add(1);
      }
      running.fetch_sub(1);
    });
  }
  int filled = 0;
  // This thread's own arrivals in generation `mine_generation`: they have no waiter behind them.
  std::uint32_t mine_generation = 0;
  int mine = 0;
  ASSERT_TRUE(WaitUntil([&] {
    if (running.load() == 0) return true;
    const std::int32_t seen = state();
    const int arrived = BarrierWord::arrived_of(seen);
    const int mine_now = BarrierWord::generation_of(seen) == mine_generation ? mine : 0;
    // Only complete a generation whose waiters are all parked: no thread will complete it.
    if (passes.load() >= kTargetPasses && arrived != 0 &&
        queued() + mine_now == static_cast<std::size_t>(arrived)) {
      const auto arrival = barrier_.arrive();
      ++filled;
      if (arrival.status == ArriveStatus::kLast) {
        leaders.fetch_add(1);
      } else {
        mine = arrival.generation == mine_generation ? mine + 1 : 1;
        mine_generation = arrival.generation;
      }
    }
    return false;
  }));
  threads.JoinOrAbort();
  // A fill that raced with a thread's last arrival may have opened a generation of its own.
  while (BarrierWord::arrived_of(state()) != 0) {
    if (barrier_.arrive().status == ArriveStatus::kLast) leaders.fetch_add(1);
    ++filled;
  }
  ASSERT_EQ(failed.load(), 0);
  const std::uint32_t generations = BarrierWord::generation_of(state());
  EXPECT_EQ(BarrierWord::arrived_of(state()), 0);
  EXPECT_EQ(static_cast<std::uint32_t>(leaders.load()), generations);
  EXPECT_EQ(static_cast<std::uint32_t>(passes.load() + filled), generations * kParties)
      << "every arrival belongs to exactly one complete generation";
  EXPECT_EQ(queued(), 0u);
}

// The one arrive step serves both forms: a Promise wait and a blocking wait pass when the last
// party arrives, whichever form that party takes, and the last is the leader.
TEST_F(BarrierWordTest, OneArriveStepServesAPromiseWaitAndABlockingWait) {
  barrier_.init(3);
  testing::PromiseStep<BarrierWord::ArriveStep> promise(barrier_);
  ASSERT_EQ(promise.Start(), Outcome::kPending);
  EXPECT_EQ(state(), State(0, 1));
  std::atomic<Outcome> blocking{Outcome::kPending};
  ThreadGroup threads;
  StartBlockingWait<BarrierWord::ArriveStep>(threads, blocking, barrier_);
  ASSERT_TRUE(WaitUntil([&] { return queued() == 2; }));
  EXPECT_EQ(barrier_.arrive().status, ArriveStatus::kLast);
  EXPECT_EQ(promise.Settle(), Outcome::kAcquired);
  threads.JoinOrAbort();
  EXPECT_EQ(blocking.load(), Outcome::kAcquired);
  EXPECT_EQ(state(), State(1, 0));

  // Generation 1: a blocking waiter, and a Promise wait as the last arrival.
  StartBlockingWait<BarrierWord::ArriveStep>(threads, blocking, barrier_);
  ASSERT_TRUE(WaitUntil([&] { return queued() == 1; }));
  EXPECT_EQ(barrier_.arrive().status, ArriveStatus::kJoined);
  testing::PromiseStep<BarrierWord::ArriveStep> leader(barrier_);
  EXPECT_EQ(leader.Start(), Outcome::kLeader);
  threads.JoinOrAbort();
  EXPECT_EQ(blocking.load(), Outcome::kAcquired);
  EXPECT_EQ(state(), State(2, 0));
  EXPECT_EQ(queued(), 0u);

  set_words(0, 0);
  testing::PromiseStep<BarrierWord::ArriveStep> uninitialized(barrier_);
  EXPECT_EQ(uninitialized.Start(), Outcome::kCorrupt);
}

// A cancelled Promise wait withdraws its arrival, unless its generation completed first (also
// when the leader's wake-up was already on its way): then it has passed.
TEST_F(BarrierWordTest, APromiseWaitCancelledWithdrawsUnlessItsGenerationCompleted) {
  barrier_.init(2);
  testing::PromiseStep<BarrierWord::ArriveStep> withdrawn(barrier_);
  ASSERT_EQ(withdrawn.Start(), Outcome::kPending);
  EXPECT_EQ(state(), State(0, 1));
  EXPECT_EQ(withdrawn.Cancel(), Outcome::kCancelled);
  EXPECT_EQ(state(), State(0, 0)) << "withdrawn";
  EXPECT_EQ(queued(), 0u);

  testing::PromiseStep<BarrierWord::ArriveStep> passed(barrier_);
  ASSERT_EQ(passed.Start(), Outcome::kPending);
  EXPECT_EQ(barrier_.arrive().status, ArriveStatus::kLast);
  ASSERT_TRUE(passed.waiter().WaitForWakes(1));
  EXPECT_EQ(passed.Cancel(), Outcome::kAcquired) << "the generation completed first";
  EXPECT_EQ(state(), State(1, 0)) << "a late cancel changes nothing";
}

// A waiter that gives up a wake-up without withdrawing (its thread stopping) keeps its arrival and
// passes the wake-up on: it may have been a notify meant for one waiter.
TEST_F(BarrierWordTest, AWakeUpAbandonedGoesToTheNextWaiterAndTheArrivalStands) {
  barrier_.init(3);
  testing::PromiseStep<BarrierWord::ArriveStep> first(barrier_);
  ASSERT_EQ(first.Start(), Outcome::kPending);
  testing::PromiseStep<BarrierWord::ArriveStep> second(barrier_);
  ASSERT_EQ(second.Start(), Outcome::kPending);
  EXPECT_EQ(futex::notify(barrier_.address(), 1), 1u);
  ASSERT_TRUE(first.waiter().WaitForWakes(1));
  EXPECT_EQ(second.waiter().wake_count(), 0u);
  first.step().abandon(first.waiter(), first.waiter().last_token());
  EXPECT_EQ(second.Settle(), Outcome::kPending) << "woken early: queued again";
  EXPECT_EQ(state(), State(0, 2)) << "the abandoned arrival stands";
  EXPECT_EQ(barrier_.arrive().status, ArriveStatus::kLast);
  EXPECT_EQ(second.Settle(), Outcome::kAcquired);
  EXPECT_EQ(queued(), 0u);
}

TEST(BarrierTest, ConstructorChecksParties) {
  for (std::int32_t bad : {0, -1, 65536, std::numeric_limits<std::int32_t>::max()}) {
    EXPECT_THROW(Barrier{bad}, std::invalid_argument) << bad;
  }
  EXPECT_EQ(Barrier(1).parties(), 1);
  EXPECT_EQ(Barrier(65535).parties(), 65535);
}

TEST(BarrierTest, WaitForTimesOutWithdrawingAndArriveAndWaitElectsOneLeader) {
  Barrier barrier(2);
  EXPECT_EQ(barrier.wait_for(1ms), std::nullopt);
  EXPECT_EQ(barrier.wait_for(0ms), std::nullopt) << "the first timed-out arrival was withdrawn";
  std::atomic<int> leaders{0};
  ThreadGroup threads;
  for (int i = 0; i < 2; ++i) {
    threads.Start([&] {
      for (int round = 0; round < 100; ++round) {
        if (barrier.arrive_and_wait()) leaders.fetch_add(1);
      }
    });
  }
  threads.JoinOrAbort();
  EXPECT_EQ(leaders.load(), 100);
}

}  // namespace
}  // namespace parklock
