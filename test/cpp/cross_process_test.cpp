// The relay of cross_process.h within one process: what another process's release, count-down or
// finish leaves behind (the word changed behind this process's lot, and the kernel futex woken by
// its wake_others(), or, in the second run of each test, not woken) reaches the waiters here
// through the relay thread and each primitive's WaitSite::look_again. Real processes are in
// test/shared_region.test.js. Native x86-64 Linux only, as shared_region_test.cpp.
#include "across_processes/cross_process.h"

#include <gtest/gtest.h>

#include "across_processes/mechanism.h"

#if (defined(__linux__) && defined(__x86_64__)) || defined(_WIN32)
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "primitives/condition.h"
#include "primitives/futex.h"
#include "primitives/latch.h"
#include "primitives/mutex.h"
#include "primitives/once.h"
#include "primitives/rwlock.h"
#include "primitives/semaphore.h"
#include "temporary_region.h"
#include "test_support.h"

namespace parklock {
namespace {

using testing::Gate;
using testing::IdentityElsewhere;
using testing::kHangGuardMs;
using testing::OnThread;
using testing::PromiseStep;
using testing::RunOnEndingThread;
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
  Gate finished;
  std::atomic<ThreadId> runner{kNoThread};
  ThreadGroup threads;
  threads.Start([&] {
    runner = shared_region::identity_at(word, current_thread_id());
    finished.Wait();
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
  finished.Open();
  threads.JoinOrAbort();
}

// The relay threads paused for the scope: only a waiter that sleeps on the word itself hears a
// release elsewhere.
class RelayPaused {
 public:
  RelayPaused() { cross_process::pause_relay_for_testing(true); }
  ~RelayPaused() { cross_process::pause_relay_for_testing(false); }
  RelayPaused(const RelayPaused&) = delete;
  RelayPaused& operator=(const RelayPaused&) = delete;
};

// A semaphore in a region, with the relay paused.
class CrossProcessDirectWakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cross_process::uses_doorbell()) {
      GTEST_SKIP() << "with the doorbell (PARKLOCK_CROSS_PROCESS=portable) no waiter sleeps on "
                      "the word itself: the relay wakes every one";
    }
  }
  // Another process's release of one permit, with its kernel wake-up.
  void release_one_elsewhere() {
    const std::int32_t marked = atomic_ref<std::int32_t>(*word_).load(std::memory_order_relaxed);
    atomic_ref<std::int32_t>(*word_).store(marked + 1, std::memory_order_release);
    cross_process::wake_others(word_);
  }
  // Starts a blocking acquire(1) on `threads`; true once `queued` waiters are queued.
  bool start_acquire(ThreadGroup& threads, std::atomic<Outcome>& outcome, std::size_t queued) {
    threads.Start(
        [this, &outcome] { outcome = semaphore_.acquire(1, Deadline::after_ms(kHangGuardMs)); });
    return WaitUntil([this, queued] { return parking_lot::queued_count(word_) == queued; });
  }

  TemporaryRegion region_;
  std::int32_t* word_ = region_.opened.words;
  SemaphoreWord semaphore_{word_};
  const RelayPaused paused_;
};

TEST_F(CrossProcessDirectWakeTest, AReleaseElsewhereReachesTheFirstBlockedWaiterWithoutTheRelay) {
  std::atomic<Outcome> outcome{Outcome::kPending};
  ThreadGroup threads;
  ASSERT_TRUE(start_acquire(threads, outcome, 1));
  release_one_elsewhere();
  threads.JoinOrAbort();
  EXPECT_EQ(outcome, Outcome::kAcquired);
}

TEST_F(CrossProcessDirectWakeTest, TheFirstBlockedWaiterPassesAChangeOnToTheOlderPromiseWaiter) {
  // What the waiter woke to do is the relay's: wake the waiters the change concerns, here the
  // Promise wait queued before it, which takes the permit; the blocking wait sleeps on.
  PromiseStep<SemaphoreWord::AcquireStep> promise(OnThread{current_thread_id()}, semaphore_, 1);
  ASSERT_EQ(promise.Start(), Outcome::kPending);
  std::atomic<Outcome> outcome{Outcome::kPending};
  ThreadGroup threads;
  ASSERT_TRUE(start_acquire(threads, outcome, 2));
  release_one_elsewhere();
  ASSERT_EQ(promise.Settle(), Outcome::kAcquired);
  EXPECT_EQ(outcome, Outcome::kPending);
  ASSERT_EQ(semaphore_.release(1), SemaphoreWord::ReleaseStatus::kReleased);
  threads.JoinOrAbort();
  EXPECT_EQ(outcome, Outcome::kAcquired);
}

// A region Mutex at the first word and a Condition on its own cache line after it.
struct RegionCondition {
  TemporaryRegion region{256};
  std::int32_t* mutex_word = region.opened.words;
  std::int32_t* condition_word = region.opened.words + 16;
  MutexWord mutex{mutex_word};
  ConditionWord condition{condition_word};
  std::int32_t word() const {
    return atomic_ref<std::int32_t>(*condition_word).load(std::memory_order_relaxed);
  }
  // A wait of the calling thread, holding the mutex as its region identity, as the binding does.
  Outcome wait(Deadline deadline) {
    const ThreadId self = shared_region::identity_at(mutex_word, current_thread_id());
    EXPECT_EQ(mutex.lock(self), MutexWord::LockStatus::kAcquired);
    const Outcome outcome = condition.wait(mutex, self, deadline);
    if (outcome == Outcome::kAcquired || outcome == Outcome::kTimedOut ||
        outcome == Outcome::kCorrupt || outcome == Outcome::kTooManyWaiters) {
      EXPECT_EQ(mutex.unlock(self), MutexWord::UnlockStatus::kUnlocked);
    }
    return outcome;
  }
  // Starts a wait() on `threads`, with the hang guard for its deadline; true once it is queued.
  bool start_wait(ThreadGroup& threads, std::atomic<Outcome>& outcome) {
    threads.Start([this, &outcome] { outcome = wait(Deadline::after_ms(kHangGuardMs)); });
    return WaitUntil([this] { return parking_lot::queued_count(condition_word) == 1; });
  }
  // A Promise wait of the calling thread (the binding's form), started holding the mutex as its
  // region identity.
  using PromiseWait = PromiseStep<ConditionWord::AwaitStep>;
  std::unique_ptr<PromiseWait> start_promise_wait() {
    const ThreadId self = shared_region::identity_at(mutex_word, current_thread_id());
    EXPECT_TRUE(mutex.try_lock(self));
    auto wait = std::make_unique<PromiseWait>(OnThread{self}, condition, mutex, self);
    EXPECT_EQ(wait->Start(), Outcome::kPending);
    return wait;
  }
  // Ends a Promise wait still queued, as an abort would, and unlocks the mutex it re-locked.
  void cancel(PromiseWait& wait) {
    EXPECT_EQ(wait.Cancel(), Outcome::kCancelled);
    EXPECT_EQ(mutex.unlock(wait.waiter().thread()), MutexWord::UnlockStatus::kUnlocked);
  }
  // Promise waits of a thread that then ends with them queued, as a process killed while its
  // threads wait leaves its registrations behind.
  std::vector<std::unique_ptr<PromiseWait>> orphans(int count) {
    std::vector<std::unique_ptr<PromiseWait>> waits;
    RunOnEndingThread([&] {
      for (int i = 0; i < count; ++i) waits.push_back(start_promise_wait());
    });
    return waits;
  }
};

// What another process's notify posts: the epoch advanced, one more notification pending.
std::int32_t notified_elsewhere(std::int32_t word) {
  return ConditionWord::shared_word(ConditionWord::waiters_of(word),
                                    ConditionWord::pending_of(word) + 1,
                                    ConditionWord::epoch_of(word) + 1);
}

TEST_P(CrossProcessTest, ANotificationPostedElsewhereWakesABlockedConditionWait) {
  RegionCondition shared;
  ASSERT_NE(shared.region.opened.region, nullptr);
  std::atomic<Outcome> outcome{Outcome::kPending};
  ThreadGroup threads;
  ASSERT_TRUE(shared.start_wait(threads, outcome));
  // The waiter registered in the word, where the other process's notify finds it.
  ASSERT_EQ(shared.word(), ConditionWord::shared_word(1, 0, 0));
  change_elsewhere(shared.condition_word, notified_elsewhere(shared.word()), shared.condition_word);
  threads.JoinOrAbort();
  EXPECT_EQ(outcome, Outcome::kAcquired);
  // It claimed the notification and its registration: nobody waits anywhere.
  EXPECT_EQ(shared.word(), ConditionWord::shared_word(0, 0, 1));
}

TEST_P(CrossProcessTest, AWaitThatBeganAfterANotifyLeavesItToTheWaitersItWasFor) {
  RegionCondition shared;
  ASSERT_NE(shared.region.opened.region, nullptr);
  // Another process's waiter, and then its notify, before this process's wait began.
  atomic_ref<std::int32_t>(*shared.condition_word).store(ConditionWord::shared_word(1, 1, 1));
  std::atomic<Outcome> outcome{Outcome::kPending};
  ThreadGroup threads;
  ASSERT_TRUE(shared.start_wait(threads, outcome));
  // Longer than the relay's poll: had the wait claimed, the word would say so.
  std::this_thread::sleep_for(cross_process::kOwnerPollInterval * 2);
  EXPECT_EQ(outcome, Outcome::kPending);
  EXPECT_EQ(shared.word(), ConditionWord::shared_word(2, 1, 1));
  // The other waiter claims its notification; the next notify is this wait's.
  atomic_ref<std::int32_t>(*shared.condition_word).store(ConditionWord::shared_word(1, 0, 1));
  change_elsewhere(shared.condition_word, notified_elsewhere(shared.word()), shared.condition_word);
  threads.JoinOrAbort();
  EXPECT_EQ(outcome, Outcome::kAcquired);
  EXPECT_EQ(shared.word(), ConditionWord::shared_word(0, 0, 2));
}

TEST(CrossProcessConditionTest, NotifiesMakeEveryWaiterEligibleAndPostUpToOneEach) {
  RegionCondition shared;
  ASSERT_NE(shared.region.opened.region, nullptr);
  EXPECT_EQ(shared.condition.notify_one(), 0u);
  EXPECT_EQ(shared.condition.notify_all(), 0u);
  EXPECT_EQ(shared.word(), ConditionWord::kNoWaiters);
  // Three waiters of other processes, one of which already has a notification.
  atomic_ref<std::int32_t>(*shared.condition_word).store(ConditionWord::shared_word(3, 1, 7));
  EXPECT_EQ(shared.condition.notify_one(), 1u);
  EXPECT_EQ(shared.word(), ConditionWord::shared_word(3, 2, 8));
  EXPECT_EQ(shared.condition.notify_all(), 3u);
  EXPECT_EQ(shared.word(), ConditionWord::shared_word(3, 3, 9));
  EXPECT_EQ(shared.condition.notify_one(), 1u);
  EXPECT_EQ(shared.word(), ConditionWord::shared_word(3, 3, 10));
  // The epoch wraps around.
  atomic_ref<std::int32_t>(*shared.condition_word)
      .store(ConditionWord::shared_word(1, 0, ConditionWord::kEpochs - 1));
  EXPECT_EQ(shared.condition.notify_one(), 1u);
  EXPECT_EQ(shared.word(), ConditionWord::shared_word(1, 1, 0));
}

TEST(CrossProcessConditionTest, AWaitThatTimesOutWithdrawsItsRegistration) {
  RegionCondition shared;
  ASSERT_NE(shared.region.opened.region, nullptr);
  EXPECT_EQ(shared.wait(Deadline::after_ms(20)), Outcome::kTimedOut);
  EXPECT_EQ(shared.word(), ConditionWord::kNoWaiters);
  // Beside another process's waiter, only its own registration goes.
  atomic_ref<std::int32_t>(*shared.condition_word).store(ConditionWord::shared_word(1, 0, 4));
  EXPECT_EQ(shared.wait(Deadline::after_ms(20)), Outcome::kTimedOut);
  EXPECT_EQ(shared.word(), ConditionWord::shared_word(1, 0, 4));
  // A wait notes the epoch it registers in, as its request, and the region identity its
  // registration is recorded under.
  ConditionWord::AwaitStep step(shared.condition, shared.mutex, current_thread_id());
  EXPECT_EQ(ConditionWord::epoch_of_request(step.request()), 4);
  EXPECT_EQ(ConditionWord::registrant_of(step.request()),
            shared_region::identity_at(shared.condition_word, current_thread_id()));
}

TEST(CrossProcessConditionTest, ACorruptOrFullWordRefusesTheWaitAndKeepsTheMutexHeld) {
  RegionCondition shared;
  ASSERT_NE(shared.region.opened.region, nullptr);
  // Full of waits that no ledger entry names (another process's, as the test writes them): none
  // of them can be taken out.
  const std::int32_t full = ConditionWord::shared_word(ConditionWord::kMostWaiters, 0, 0);
  for (const std::int32_t bad :
       {-1, ConditionWord::shared_word(1, 0, 0) + (2 << ConditionWord::kPendingShift),
        1 << ConditionWord::kWaiterShift, full}) {
    atomic_ref<std::int32_t>(*shared.condition_word).store(bad);
    // wait() unlocks the mutex after kCorrupt or kTooManyWaiters: it was still held.
    EXPECT_EQ(shared.wait(Deadline::after_ms(kHangGuardMs)),
              bad == full ? Outcome::kTooManyWaiters : Outcome::kCorrupt)
        << bad;
    EXPECT_EQ(shared.word(), bad);
    EXPECT_EQ(parking_lot::queued_count(shared.condition_word), 0u);
  }
  atomic_ref<std::int32_t>(*shared.condition_word).store(-1);
  EXPECT_EQ(shared.condition.notify_one(), 0u);
  EXPECT_EQ(shared.condition.notify_all(), 0u);
  EXPECT_EQ(shared.word(), -1);
}

TEST(CrossProcessConditionTest, NotifyAllTakesOutTheWaitsOfAThreadThatEndedAndCountsTheLiving) {
  RegionCondition shared;
  ASSERT_NE(shared.region.opened.region, nullptr);
  auto living = shared.start_promise_wait();
  auto orphans = shared.orphans(3);
  ASSERT_EQ(shared.word(), ConditionWord::shared_word(4, 0, 0));
  const ThreadId self = shared_region::identity_at(shared.mutex_word, current_thread_id());
  ASSERT_EQ(shared.mutex.lock(self), MutexWord::LockStatus::kAcquired);
  EXPECT_EQ(shared.condition.notify_all(), 1u);
  EXPECT_EQ(shared.mutex.unlock(self), MutexWord::UnlockStatus::kUnlocked);
  EXPECT_EQ(living->Settle(), Outcome::kAcquired);
  EXPECT_EQ(shared.mutex.unlock(self), MutexWord::UnlockStatus::kUnlocked);
  EXPECT_EQ(shared.word(), ConditionWord::shared_word(0, 0, 1));
  // Their departures find their registrations taken already, and leave the word alone.
  for (auto& orphan : orphans) shared.cancel(*orphan);
  EXPECT_EQ(shared.word(), ConditionWord::shared_word(0, 0, 1));
}

TEST(CrossProcessConditionTest, AWaitThatFindsTheWordFullTakesOutTheWaitsOfThreadsThatEnded) {
  RegionCondition shared;
  ASSERT_NE(shared.region.opened.region, nullptr);
  constexpr std::int32_t kMost = ConditionWord::kMostWaiters;
  // Beside waits that no ledger entry names, which stay.
  atomic_ref<std::int32_t>(*shared.condition_word)
      .store(ConditionWord::shared_word(kMost - 2, 0, 0));
  auto orphans = shared.orphans(2);
  ASSERT_EQ(shared.word(), ConditionWord::shared_word(kMost, 0, 0));
  EXPECT_EQ(shared.wait(Deadline::after_ms(20)), Outcome::kTimedOut);
  EXPECT_EQ(shared.word(), ConditionWord::shared_word(kMost - 2, 0, 0));
  // Full of living waits: refused.
  std::vector<std::unique_ptr<RegionCondition::PromiseWait>> mine;
  mine.push_back(shared.start_promise_wait());
  mine.push_back(shared.start_promise_wait());
  EXPECT_EQ(shared.wait(Deadline::after_ms(kHangGuardMs)), Outcome::kTooManyWaiters);
  EXPECT_EQ(shared.word(), ConditionWord::shared_word(kMost, 0, 0));
  EXPECT_EQ(parking_lot::queued_count(shared.condition_word), 4u);
  for (auto& wait : mine) shared.cancel(*wait);
  for (auto& orphan : orphans) shared.cancel(*orphan);
  EXPECT_EQ(shared.word(), ConditionWord::shared_word(kMost - 2, 0, 0));
}

// A region RWLock at the first words, and the calling thread's identity there.
struct RegionRwLock {
  TemporaryRegion region;
  std::int32_t* words = region.opened.words;
  RwLockWords lock{words};
  std::int32_t state() const {
    return atomic_ref<std::int32_t>(words[RwLockWords::kStateIndex])
        .load(std::memory_order_relaxed);
  }
  ThreadId self() const { return shared_region::identity_at(words, current_thread_id()); }
};

TEST_P(CrossProcessTest, AWriteReleasedElsewhereLetsTheBlockedReadersAndWriterCompete) {
  RegionRwLock shared;
  ASSERT_NE(shared.region.opened.region, nullptr);
  // Another process's writer holds it.
  atomic_ref<std::int32_t>(shared.words[RwLockWords::kStateIndex]).store(RwLockWords::kWriter);
  std::atomic<int> acquired{0};
  ThreadGroup threads;
  for (int i = 0; i < 3; ++i) {
    threads.Start([&, i] {
      const ThreadId self = shared.self();
      const Deadline deadline = Deadline::after_ms(kHangGuardMs);
      if (i == 0) {
        if (shared.lock.lock(self, deadline) != Outcome::kAcquired) return;
        ++acquired;
        EXPECT_EQ(shared.lock.unlock(self), RwLockWords::UnlockStatus::kUnlocked);
      } else {
        if (shared.lock.lock_shared(self, deadline) != Outcome::kAcquired) return;
        ++acquired;
        EXPECT_EQ(shared.lock.unlock_shared(), RwLockWords::UnlockStatus::kUnlocked);
      }
    });
  }
  ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(shared.words) == 3; }));
  EXPECT_EQ(shared.state(), RwLockWords::kWriter | RwLockWords::kParked);
  // The other process's release: the lock freed, and with it the parked bit.
  change_elsewhere(shared.words, 0, shared.words);
  threads.JoinOrAbort();
  EXPECT_EQ(acquired, 3);
  EXPECT_EQ(shared.state(), 0);
  EXPECT_EQ(parking_lot::queued_count(shared.words), 0u);
}

TEST_P(CrossProcessTest, AnUpgradeWaitsForAReaderElsewhereToLeave) {
  RegionRwLock shared;
  ASSERT_NE(shared.region.opened.region, nullptr);
  const ThreadId self = shared.self();
  ASSERT_EQ(shared.lock.lock_upgradable(self), Outcome::kAcquired);
  // Another process's reader beside it.
  atomic_ref<std::int32_t>(shared.words[RwLockWords::kStateIndex])
      .fetch_add(RwLockWords::kOneReader);
  std::atomic<Outcome> outcome{Outcome::kPending};
  ThreadGroup threads;
  threads.Start([&] {
    // The upgrade of this thread's hold, run on another thread as the same region identity.
    outcome = shared.lock.upgrade(self, Deadline::after_ms(kHangGuardMs));
  });
  // The drain waits on the lock's own queue, where wake-ups from any process reach it.
  ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(shared.words) == 1; }));
  EXPECT_NE(shared.state() & RwLockWords::kDraining, 0);
  change_elsewhere(shared.words, shared.state() - RwLockWords::kOneReader, shared.words);
  threads.JoinOrAbort();
  EXPECT_EQ(outcome, Outcome::kAcquired);
  EXPECT_EQ(shared.lock.writer(), self);
  EXPECT_EQ(shared.lock.unlock(self), RwLockWords::UnlockStatus::kUnlocked);
  EXPECT_EQ(shared.state(), 0);
}

TEST_P(CrossProcessTest, AWriterRefusedBesideReadersElsewhereDrainsThemAtOnce) {
  RegionRwLock shared;
  ASSERT_NE(shared.region.opened.region, nullptr);
  // Another process's reader holds it.
  atomic_ref<std::int32_t>(shared.words[RwLockWords::kStateIndex]).store(RwLockWords::kOneReader);
  std::atomic<Outcome> outcome{Outcome::kPending};
  std::atomic<ThreadId> writer{kNoThread};
  ThreadGroup threads;
  threads.Start([&] {
    writer = shared.self();
    outcome = shared.lock.lock(writer, Deadline::after_ms(kHangGuardMs));
  });
  ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(shared.words) == 1; }));
  // No reader joins while it drains, and the owner word names it.
  EXPECT_EQ(shared.state(),
            RwLockWords::kOneReader | RwLockWords::kDraining | RwLockWords::kParked);
  EXPECT_FALSE(shared.lock.try_lock_shared());
  EXPECT_EQ(RwLockWords::holder_at(shared.words), writer);
  change_elsewhere(shared.words, shared.state() - RwLockWords::kOneReader, shared.words);
  threads.JoinOrAbort();
  EXPECT_EQ(outcome, Outcome::kAcquired);
  EXPECT_EQ(shared.lock.writer(), writer);
  EXPECT_EQ(shared.lock.unlock(writer), RwLockWords::UnlockStatus::kUnlocked);
  EXPECT_EQ(shared.state(), 0);
}

TEST(CrossProcessRwLockTest, TheDrainOfAWriterThatEndedIsEndedByWhoeverFindsIt) {
  RegionRwLock shared;
  ASSERT_NE(shared.region.opened.region, nullptr);
  ThreadId gone = kNoThread;
  RunOnEndingThread([&] { gone = shared.self(); });
  ASSERT_TRUE(shared_region::owner_ended(shared.words, gone));
  // A drain its writer's process left behind, the readers it waited for gone too.
  atomic_ref<std::int32_t>(shared.words[RwLockWords::kStateIndex])
      .store(RwLockWords::kDraining | RwLockWords::kParked);
  atomic_ref<std::int32_t>(shared.words[RwLockWords::kOwnerIndex]).store(gone);
  const ThreadId self = shared.self();
  ThreadId reported = kNoThread;
  EXPECT_EQ(shared.lock.try_lock_from_ended(RwLockWords::Mode::kShared, self, &reported),
            Outcome::kAcquired);
  // Not an owner death: the writer held nothing.
  EXPECT_EQ(reported, kNoThread);
  EXPECT_EQ(shared.state(), RwLockWords::kOneReader);
  EXPECT_EQ(shared.lock.unlock_shared(), RwLockWords::UnlockStatus::kUnlocked);
  // A live writer's drain is left alone.
  atomic_ref<std::int32_t>(shared.words[RwLockWords::kStateIndex])
      .store(RwLockWords::kOneReader | RwLockWords::kDraining | RwLockWords::kParked);
  atomic_ref<std::int32_t>(shared.words[RwLockWords::kOwnerIndex]).store(self);
  EXPECT_FALSE(shared.lock.end_ended_drain(kNoThread));
  EXPECT_EQ(shared.state(),
            RwLockWords::kOneReader | RwLockWords::kDraining | RwLockWords::kParked);
}

TEST(CrossProcessRwLockTest, ALateEndOfADrainLeavesTheNextOneAlone) {
  RegionRwLock shared;
  ASSERT_NE(shared.region.opened.region, nullptr);
  auto& state = shared.words[RwLockWords::kStateIndex];
  auto& owner = shared.words[RwLockWords::kOwnerIndex];
  constexpr std::int32_t kDrained =
      RwLockWords::kOneReader | RwLockWords::kDraining | RwLockWords::kParked;
  ThreadId gone = kNoThread;
  RunOnEndingThread([&] { gone = shared.self(); });
  const ThreadId next = shared.self();
  // A writer's drain that another writer has begun since: the first one's end is too late.
  atomic_ref<std::int32_t>(state).store(kDrained);
  atomic_ref<std::int32_t>(owner).store(next);
  shared.lock.end_drain(gone);
  EXPECT_EQ(shared.state(), kDrained);
  EXPECT_EQ(atomic_ref<std::int32_t>(owner).load(), next);
  // Its own, it ends, and its name goes.
  shared.lock.end_drain(next);
  EXPECT_EQ(shared.state(), RwLockWords::kOneReader | RwLockWords::kParked);
  EXPECT_EQ(atomic_ref<std::int32_t>(owner).load(), kNoThread);
  // An upgrader that ended: its drain goes with its hold, whoever releases that, and only once.
  atomic_ref<std::int32_t>(state).store(RwLockWords::kUpgradable | 2 * RwLockWords::kOneReader |
                                        RwLockWords::kDraining | RwLockWords::kParked);
  atomic_ref<std::int32_t>(owner).store(gone);
  shared.lock.end_drain(gone);
  EXPECT_NE(shared.state() & RwLockWords::kDraining, 0);
  EXPECT_TRUE(shared.lock.release_ended_upgrader(next));
  EXPECT_EQ(shared.state(), RwLockWords::kOneReader | RwLockWords::kParked);
  EXPECT_EQ(shared.lock.unlock_shared(), RwLockWords::UnlockStatus::kUnlocked);
  EXPECT_EQ(shared.state(), 0);
}

TEST(CrossProcessRwLockTest, ASlowReleaseClearsTheParkedBitExactlyWhenItFreesTheLock) {
  RegionRwLock shared;
  ASSERT_NE(shared.region.opened.region, nullptr);
  auto& state = shared.words[RwLockWords::kStateIndex];
  constexpr std::int32_t kParked = RwLockWords::kParked;
  constexpr std::int32_t kOneReader = RwLockWords::kOneReader;
  // Two readers, a waiter marked somewhere: the first leaves the mark, the last takes it along.
  atomic_ref<std::int32_t>(state).store(2 * kOneReader | kParked);
  EXPECT_EQ(shared.lock.unlock_shared(), RwLockWords::UnlockStatus::kUnlocked);
  EXPECT_EQ(shared.state(), kOneReader | kParked);
  EXPECT_EQ(shared.lock.unlock_shared(), RwLockWords::UnlockStatus::kUnlocked);
  EXPECT_EQ(shared.state(), 0);
  // A downgrade keeps the mark beside its read hold; a write release frees the lock.
  const ThreadId self = shared.self();
  ASSERT_EQ(shared.lock.lock(self), Outcome::kAcquired);
  atomic_ref<std::int32_t>(state).fetch_or(kParked);
  EXPECT_EQ(shared.lock.downgrade(self), RwLockWords::UnlockStatus::kUnlocked);
  EXPECT_EQ(shared.state(), kOneReader | kParked);
  EXPECT_EQ(shared.lock.unlock_shared(), RwLockWords::UnlockStatus::kUnlocked);
  ASSERT_EQ(shared.lock.lock(self), Outcome::kAcquired);
  atomic_ref<std::int32_t>(state).fetch_or(kParked);
  EXPECT_EQ(shared.lock.unlock(self), RwLockWords::UnlockStatus::kUnlocked);
  EXPECT_EQ(shared.state(), 0);
  // A wait that times out leaves its mark to the holder's release.
  atomic_ref<std::int32_t>(state).store(kOneReader);
  EXPECT_EQ(shared.lock.lock(self, Deadline::after_ms(10)), Outcome::kTimedOut);
  EXPECT_EQ(shared.state(), kOneReader | kParked);
  EXPECT_EQ(shared.lock.unlock_shared(), RwLockWords::UnlockStatus::kUnlocked);
  EXPECT_EQ(shared.state(), 0);
}

TEST(CrossProcessRwLockTest, AWriterWhoseThreadEndsIsTakenOverByTheWaiterQueuedForIt) {
  RegionRwLock shared;
  ASSERT_NE(shared.region.opened.region, nullptr);
  Gate end;
  std::atomic<ThreadId> writer{kNoThread};
  ThreadGroup threads;
  threads.Start([&] {
    const ThreadId self = shared.self();
    ASSERT_EQ(shared.lock.lock(self), Outcome::kAcquired);
    writer = self;
    end.Wait();
    // Ends holding the write lock.
  });
  ASSERT_TRUE(WaitUntil([&] { return writer != kNoThread; }));
  std::atomic<Outcome> outcome{Outcome::kPending};
  std::atomic<ThreadId> reported{kNoThread};
  threads.Start([&] {
    ThreadId ended = kNoThread;
    outcome = shared.lock.lock_shared(shared.self(), Deadline::after_ms(kHangGuardMs), &ended);
    reported = ended;
    if (outcome == Outcome::kOwnerDied) shared.lock.unlock_shared();
  });
  ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(shared.words) == 1; }));
  end.Open();
  threads.JoinOrAbort();
  EXPECT_EQ(outcome, Outcome::kOwnerDied);
  EXPECT_EQ(reported, writer);
  EXPECT_EQ(shared.state(), 0);
}

// One futex_waitv sleeps on at most 128 words; a relay thread's own is one of them.
constexpr std::size_t kWordsOfOneRelayThread = 127;
constexpr std::size_t kManyWords = 300;

// kManyWords region mutexes, held by two threads of other processes: `later_holder` holds every
// other word after the first kWordsOfOneRelayThread, `first_holder` the rest. On each, a Promise
// lock wait of this thread, queued in order: the words queued first are as many as one relay
// thread could watch.
struct ManyMutexesHeldElsewhere {
  TemporaryRegion region{4 * kManyWords};
  IdentityElsewhere first_holder{region, shared_region::kSlots - 1};
  IdentityElsewhere later_holder{region, shared_region::kSlots - 2};
  const ThreadId self = shared_region::identity_at(region.opened.words, current_thread_id());
  std::vector<std::unique_ptr<PromiseStep<MutexWord::LockStep>>> waits;

  std::int32_t* word(std::size_t i) const { return region.opened.words + i; }
  const IdentityElsewhere& holder_of(std::size_t i) const {
    return i >= kWordsOfOneRelayThread && i % 2 == 1 ? later_holder : first_holder;
  }

  // Holds every mutex and queues a wait on each; false if one did not queue.
  bool queue_waits() {
    for (std::size_t i = 0; i < kManyWords; ++i) {
      atomic_ref<std::int32_t>(*word(i)).store(
          MutexWord::held_by(holder_of(i).identity(), MutexWord::kLocked));
      waits.push_back(std::make_unique<PromiseStep<MutexWord::LockStep>>(MutexWord(word(i)), self));
      if (waits.back()->Start() != Outcome::kPending) return false;
    }
    return true;
  }

  // The words whose index `pick` takes.
  template <typename Pick>
  static std::vector<std::size_t> words_where(Pick pick) {
    std::vector<std::size_t> picked;
    for (std::size_t i = 0; i < kManyWords; ++i) {
      if (pick(i)) picked.push_back(i);
    }
    return picked;
  }

  // Whether the wait on every one of `words` gets woken (within the wait limit).
  bool woken(const std::vector<std::size_t>& words) const {
    return WaitUntil([&] {
      for (const std::size_t i : words) {
        if (waits[i]->waiter().wake_count() == 0) return false;
      }
      return true;
    });
  }

  // Each of those waits, settled, comes to `expected` and unlocks what it took.
  void settle(const std::vector<std::size_t>& words, Outcome expected) {
    for (const std::size_t i : words) {
      EXPECT_EQ(waits[i]->Settle(), expected) << "the wait on word " << i;
      EXPECT_EQ(MutexWord(word(i)).unlock(self), MutexWord::UnlockStatus::kUnlocked) << i;
    }
  }
};

TEST_P(CrossProcessTest, ReleasesElsewhereReachTheWaitersOfMoreWordsThanOneRelayThreadWatches) {
  ManyMutexesHeldElsewhere shared;
  ASSERT_NE(shared.region.opened.region, nullptr);
  ASSERT_TRUE(shared.queue_waits());
  // The words queued later first: while the first ones still have waiters, the releases reach
  // their waiters only if a relay thread watches those words too.
  const auto later = shared.words_where([](std::size_t i) { return i >= kWordsOfOneRelayThread; });
  const auto first = shared.words_where([](std::size_t i) { return i < kWordsOfOneRelayThread; });
  for (const auto& words : {later, first}) {
    for (const std::size_t i : words) {
      change_elsewhere(shared.word(i), MutexWord::kUnlocked, shared.word(i));
    }
    ASSERT_TRUE(shared.woken(words));
    shared.settle(words, Outcome::kAcquired);
  }
}

TEST(CrossProcessManyWordsTest, AHolderWhoseProcessDiesIsReportedOnEveryWordItHeld) {
  ManyMutexesHeldElsewhere shared;
  ASSERT_NE(shared.region.opened.region, nullptr);
  ASSERT_TRUE(shared.queue_waits());
  const auto dead = shared.words_where(
      [&](std::size_t i) { return &shared.holder_of(i) == &shared.later_holder; });
  const auto alive = shared.words_where(
      [&](std::size_t i) { return &shared.holder_of(i) == &shared.first_holder; });
  // Nothing changes in the words: only a relay thread looking at their holders finds one dead,
  // beside the live one.
  shared.later_holder.die();
  ASSERT_TRUE(shared.woken(dead));
  shared.settle(dead, Outcome::kOwnerDied);
  for (const std::size_t i : dead) {
    EXPECT_EQ(shared.waits[i]->step().ended_owner(), shared.later_holder.identity()) << i;
  }
  // The live holder's waiters still wait, and get its releases. (With the doorbell, the releases
  // of the dead holder's words may ring more often than a relay tells apart, and wake every
  // waiter to look again: doorbell.h.)
  for (const std::size_t i : alive) {
    if (!cross_process::uses_doorbell()) {
      EXPECT_EQ(shared.waits[i]->waiter().wake_count(), 0u) << i;
    }
    atomic_ref<std::int32_t>(*shared.word(i)).store(MutexWord::kUnlocked);
    cross_process::wake_others(shared.word(i));
  }
  ASSERT_TRUE(shared.woken(alive));
  shared.settle(alive, Outcome::kAcquired);
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
