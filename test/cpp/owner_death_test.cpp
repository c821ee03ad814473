// Owner death: ended threads are recorded once and for all, a lock their thread held is taken
// over by the next acquirer (lazily) or handed to the oldest waiter (at the end of the thread),
// and the report that the owner ended is never lost on the way.
#include "lot/owner_death.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>

#include "lot/parking_lot.h"
#include "lot/thread_id.h"
#include "primitives/futex.h"
#include "primitives/mutex.h"
#include "test_support.h"

namespace parklock {
namespace {

using testing::kHangGuardMs;
using testing::RecordingWaiter;
using testing::RunOnEndingThread;
using testing::ThreadGroup;
using testing::WaitUntil;
using testing::with_interrupt;

TEST(ThreadEndedTest, AThreadIsEndedOnlyOnceItHasExitedAndForever) {
  std::atomic<bool> seen_alive{false};
  const ThreadId id = RunOnEndingThread([&] { seen_alive = !thread_ended(current_thread_id()); });
  EXPECT_TRUE(seen_alive.load());
  EXPECT_TRUE(thread_ended(id));
  EXPECT_FALSE(end_thread(id)) << "ending is idempotent: only the first call acts";
  EXPECT_FALSE(thread_ended(current_thread_id()));
  EXPECT_FALSE(thread_ended(kNoThread));
}

TEST(MutexOwnerDeathTest, TheNextLockTakesOverAndReportsTheEndedOwner) {
  alignas(4) std::int32_t word = 0;
  MutexWord mutex(&word);
  const ThreadId ended =
      RunOnEndingThread([&] { ASSERT_TRUE(mutex.try_lock(current_thread_id())); });
  EXPECT_TRUE(mutex.is_locked()) << "not silently freed";
  ThreadId reported = kNoThread;
  EXPECT_EQ(mutex.lock(current_thread_id(), Deadline::after_ms(kHangGuardMs), &reported),
            MutexWord::LockStatus::kOwnerDied);
  EXPECT_EQ(reported, ended);
  EXPECT_EQ(mutex.owner_thread(), current_thread_id());
  EXPECT_EQ(mutex.unlock(current_thread_id()), MutexWord::UnlockStatus::kUnlocked);
  EXPECT_EQ(mutex.lock(current_thread_id()), MutexWord::LockStatus::kAcquired) << "ordinary again";
  mutex.unlock(current_thread_id());
  EXPECT_EQ(word, 0);
}

TEST(MutexOwnerDeathTest, TakeFromEndedOwnerLeavesALiveOwnersLockAlone) {
  alignas(4) std::int32_t word = 0;
  MutexWord mutex(&word);
  ASSERT_TRUE(mutex.try_lock(current_thread_id()));
  ThreadGroup threads;
  std::atomic<bool> taken{true};
  threads.Start([&] {
    ThreadId ended = kNoThread;
    taken = mutex.take_from_ended_owner(current_thread_id(), &ended);
  });
  threads.JoinOrAbort();
  EXPECT_FALSE(taken.load());
  EXPECT_EQ(mutex.owner_thread(), current_thread_id());
  mutex.unlock(current_thread_id());
}

TEST(MutexOwnerDeathTest, AWaiterParkedBeforeTheOwnerEndsIsHandedTheLockWithTheReport) {
  alignas(4) std::int32_t word = 0;
  MutexWord mutex(&word);
  std::atomic<bool> release{false};
  std::atomic<ThreadId> owner{kNoThread};
  std::thread holder([&] {
    owner = current_thread_id();
    ASSERT_TRUE(mutex.try_lock(current_thread_id()));
    while (!release) std::this_thread::yield();
  });
  ASSERT_TRUE(WaitUntil([&] { return mutex.is_locked(); }));

  ThreadGroup waiters;
  std::atomic<int> status{-1};
  std::atomic<ThreadId> reported{kNoThread};
  waiters.Start([&] {
    ThreadId ended = kNoThread;
    status =
        static_cast<int>(mutex.lock(current_thread_id(), Deadline::after_ms(kHangGuardMs), &ended));
    reported = ended;
    mutex.unlock(current_thread_id());
  });
  ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(mutex.address()) == 1; }));
  release = true;
  holder.join();  // the holder ends holding the lock: its end hands it to the parked waiter
  waiters.JoinOrAbort();
  EXPECT_EQ(status.load(), static_cast<int>(MutexWord::LockStatus::kOwnerDied));
  EXPECT_EQ(reported.load(), owner.load());
  EXPECT_EQ(word, 0);
}

TEST(MutexOwnerDeathTest, AWaiterThatGivesUpAnEndedOwnersHandOffPassesTheReportOn) {
  alignas(4) std::int32_t word = 0;
  MutexWord mutex(&word);
  std::atomic<bool> release{false};
  std::thread holder([&] {
    ASSERT_TRUE(mutex.try_lock(current_thread_id()));
    while (!release) std::this_thread::yield();
  });
  ASSERT_TRUE(WaitUntil([&] { return mutex.is_locked(); }));
  // An asynchronous waiter of this thread, which will abandon whatever it is handed.
  RecordingWaiter waiter;
  ASSERT_EQ(mutex.lock_or_enqueue(current_thread_id(), waiter, false), Outcome::kPending);
  release = true;
  holder.join();
  ASSERT_TRUE(waiter.WaitForWakes(1));
  const WakeToken token = waiter.last_token();
  ASSERT_EQ(grant_of(token), MutexWord::kHandedOff);
  const ThreadId ended = ended_owner_of(token);
  ASSERT_NE(ended, kNoThread);
  mutex.abandon_wake(current_thread_id(), token);
  EXPECT_TRUE(mutex.is_locked()) << "given back to the ended owner, not freed";

  ThreadId reported = kNoThread;
  EXPECT_EQ(mutex.lock(current_thread_id(), Deadline::after_ms(kHangGuardMs), &reported),
            MutexWord::LockStatus::kOwnerDied);
  EXPECT_EQ(reported, ended);
  mutex.unlock(current_thread_id());
  EXPECT_EQ(word, 0);
}

TEST(MutexOwnerDeathTest, ALockReleasedBeforeItsOwnerEndedIsOrdinary) {
  alignas(4) std::int32_t word = 0;
  MutexWord mutex(&word);
  RunOnEndingThread([&] {
    ASSERT_TRUE(mutex.try_lock(current_thread_id()));
    mutex.unlock(current_thread_id());
  });
  EXPECT_EQ(mutex.lock(current_thread_id()), MutexWord::LockStatus::kAcquired);
  mutex.unlock(current_thread_id());
}

TEST(ParkTest, AnInterruptRequestedByTheTimeOfTheWakeUpIsReported) {
  alignas(4) std::int32_t word = 0;
  std::atomic<bool> stop{false};
  auto stopping = [&] { return stop.load(); };
  const Interrupt interrupt{std::chrono::milliseconds(20), stopping};
  ThreadGroup threads;
  ParkResult result{ParkResult::Status::kInvalid};
  threads.Start([&] {
    result = with_interrupt(&interrupt, [&] {
      return parking_lot::park(
          &word, [] { return true; }, Deadline::after_ms(kHangGuardMs));
    });
  });
  ASSERT_TRUE(WaitUntil([&] { return parking_lot::queued_count(&word) == 1; }));
  stop = true;
  parking_lot::unpark_one(&word, [](const UnparkInfo&) { return WakeToken{7}; });
  threads.JoinOrAbort();
  EXPECT_EQ(result.status, ParkResult::Status::kUnparked);
  EXPECT_EQ(result.token, 7);
  EXPECT_TRUE(result.interrupted) << "the waiter must pass on what it was handed";
}

TEST(FutexKeyTest, FutexCallsOnAPrimitivesWordNeverMeetItsWaiters) {
  alignas(4) std::int32_t word = 0;
  MutexWord mutex(&word);
  ASSERT_TRUE(mutex.try_lock(current_thread_id()));
  RecordingWaiter waiter;
  ASSERT_EQ(mutex.lock_or_enqueue(current_thread_id(), waiter, false), Outcome::kPending);
  EXPECT_EQ(futex::notify(&word, 10), 0u);
  EXPECT_EQ(waiter.wake_count(), 0u);
  EXPECT_EQ(futex::queued_count(&word), 0u);
  EXPECT_EQ(parking_lot::queued_count(&word), 1u);
  ASSERT_TRUE(parking_lot::cancel(waiter));
  mutex.abandon_wake(current_thread_id(), MutexWord::kReleased);
  word = 0;
}

}  // namespace
}  // namespace parklock
