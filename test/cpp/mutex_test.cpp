// Tests of the three-state mutex (mutex.h) with real threads: exclusion, ownership checks,
// corrupt words, the fairness handoff, FIFO order, timeouts and interrupts racing unlocks, and the
// lock step (lock_or_enqueue / abandon_wake), as a Promise wait runs it.
#include "primitives/mutex.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "lot/atomic_ref.h"
#include "test_support.h"

namespace parklock {
namespace {

using namespace std::chrono_literals;
using testing::kHangGuardMs;
using testing::PromiseWait;
using testing::RecordingWaiter;
using testing::ThreadGroup;
using testing::WaitUntil;
using testing::with_interrupt;
using LockStatus = MutexWord::LockStatus;
using UnlockStatus = MutexWord::UnlockStatus;

// Identities for asynchronous waiters that have no thread of their own in these tests. MutexWord
// treats a ThreadId as an opaque number; current_thread_id() hands out small consecutive ones, so
// these (the largest the owner field holds) never collide with a real thread of this process.
constexpr ThreadId kAsyncA = MutexWord::kOwnerLimit - 2;
constexpr ThreadId kAsyncB = MutexWord::kOwnerLimit - 3;

// A deadline for lock calls that should succeed: a lost wake-up then ends as kTimedOut, a
// readable failure, instead of hanging the suite.
Deadline HangGuard() {
  return Deadline::after_ms(kHangGuardMs);
}

// The unlock policy, pinned regardless of how slowly the test runs: every unlock that finds a
// waiter hands the lock to it (kAlways), or none does and the lock is released (kNever).
using parking_lot::FairnessForTesting;
using testing::FairnessOverride;

// A mutex over raw memory, as the binding uses it over a SharedArrayBuffer.
class MutexWordTest : public ::testing::Test {
 protected:
  std::int32_t raw() { return atomic_ref<std::int32_t>(words_[0]).load(); }
  MutexWord::State state() { return MutexWord::state_of(raw()); }
  ThreadId owner() { return MutexWord::owner_of(raw()); }
  std::size_t queued() { return parking_lot::queued_count(word_.address()); }

  alignas(MutexWord::kAlign) std::int32_t words_[MutexWord::kWordCount] = {};
  MutexWord word_{words_};
  const ThreadId self_ = current_thread_id();
};

TEST_F(MutexWordTest, UncontendedLockRecordsTheOwnerAndUnlockClearsIt) {
  ASSERT_EQ(word_.lock(self_), LockStatus::kAcquired);
  EXPECT_EQ(state(), MutexWord::kLocked);
  EXPECT_EQ(owner(), self_);
  EXPECT_TRUE(word_.is_locked());
  EXPECT_EQ(word_.owner_thread(), self_);

  EXPECT_EQ(raw(), MutexWord::held_by(self_, MutexWord::kLocked));

  EXPECT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);
  EXPECT_EQ(raw(), 0) << "an unlocked mutex is all zero";
  EXPECT_FALSE(word_.is_locked());
}

TEST(MutexTest, ExcludesUnderContentionSoAPlainCounterIsExact) {
  constexpr int kThreads = 8;
  constexpr int kIterations = 5000;
  Mutex mutex;
  std::int64_t counter = 0;  // deliberately not atomic: only the mutex protects it
  ThreadGroup threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.Start([&] {
      for (int i = 0; i < kIterations; ++i) {
        std::lock_guard<Mutex> guard(mutex);
        const std::int64_t seen = counter;
        // Now and then hold the lock across a reschedule, so that others spin out and park and
        // the unlock slow path (release and handoff) runs, not only the fast path.
        if (i % 64 == 0) std::this_thread::yield();
        counter = seen + 1;
      }
    });
  }
  threads.JoinOrAbort();
  EXPECT_EQ(counter, std::int64_t{kThreads} * kIterations);
}

TEST(MutexTest, TryLockFailsWhileHeldAndSucceedsOnceFree) {
  Mutex mutex;
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_FALSE(mutex.try_lock()) << "try_lock must not succeed recursively";
  bool other_got_it = true;
  std::thread([&] { other_got_it = mutex.try_lock(); }).join();
  EXPECT_FALSE(other_got_it);

  mutex.unlock();
  std::thread([&] {
    other_got_it = mutex.try_lock();
    if (other_got_it) mutex.unlock();
  }).join();
  EXPECT_TRUE(other_got_it);
}

TEST(MutexTest, TryLockForTimesOutWhileAnotherThreadHoldsIt) {
  Mutex mutex;
  std::atomic<bool> holding{false};
  std::atomic<bool> release{false};
  ThreadGroup threads;
  threads.Start([&] {
    std::lock_guard<Mutex> guard(mutex);
    holding = true;
    EXPECT_TRUE(WaitUntil([&] { return release.load(); }));
  });
  ASSERT_TRUE(WaitUntil([&] { return holding.load(); }));

  const auto started = Clock::now();
  EXPECT_FALSE(mutex.try_lock_for(20ms));
  // A lower bound only: the deadline is checked against the same clock.
  EXPECT_GE(Clock::now() - started, 20ms);
  EXPECT_FALSE(mutex.try_lock_for(0ms));

  release = true;
  threads.JoinOrAbort();
  ASSERT_TRUE(mutex.try_lock_for(1ms));
  mutex.unlock();
}

TEST(MutexTest, TryLockForSucceedsWhenReleasedDuringTheWait) {
  Mutex mutex;
  std::atomic<bool> holding{false};
  ThreadGroup threads;
  threads.Start([&] {
    std::lock_guard<Mutex> guard(mutex);
    holding = true;
    std::this_thread::sleep_for(5ms);
  });
  ASSERT_TRUE(WaitUntil([&] { return holding.load(); }));

  std::unique_lock<Mutex> guard(mutex, testing::kWaitLimit);
  EXPECT_TRUE(guard.owns_lock());
  guard.unlock();
  threads.JoinOrAbort();
}

TEST(MutexTest, LockByTheHolderThrowsDeadlockError) {
  Mutex mutex;
  mutex.lock();
  try {
    mutex.lock();
    ADD_FAILURE() << "a recursive lock() returned";
  } catch (const std::system_error& error) {
    EXPECT_EQ(error.code(), std::errc::resource_deadlock_would_occur);
  }
  EXPECT_FALSE(mutex.try_lock_for(1ms)) << "a recursive timed lock must fail, not succeed";

  // Still held by this thread, and still releasable.
  bool other_got_it = true;
  std::thread([&] { other_got_it = mutex.try_lock(); }).join();
  EXPECT_FALSE(other_got_it);
  mutex.unlock();
  EXPECT_TRUE(mutex.try_lock());
  mutex.unlock();
}

TEST_F(MutexWordTest, LockByTheHolderReturnsAlreadyHeld) {
  ASSERT_EQ(word_.lock(self_), LockStatus::kAcquired);

  EXPECT_EQ(word_.lock(self_), LockStatus::kAlreadyHeld);
  EXPECT_EQ(word_.lock(self_, HangGuard()), LockStatus::kAlreadyHeld);
  EXPECT_EQ(state(), MutexWord::kLocked) << "a refused lock must not mark the mutex contended";
  EXPECT_EQ(owner(), self_);

  EXPECT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);
  EXPECT_EQ(state(), MutexWord::kUnlocked);
}

TEST_F(MutexWordTest, UnlockByNonOwnerIsRefusedAndLeavesTheLockHeld) {
  EXPECT_EQ(word_.unlock(self_), UnlockStatus::kNotOwner) << "unlocking a free mutex";

  ASSERT_EQ(word_.lock(self_), LockStatus::kAcquired);
  UnlockStatus from_other = UnlockStatus::kUnlocked;
  std::thread([&] { from_other = word_.unlock(current_thread_id()); }).join();

  EXPECT_EQ(from_other, UnlockStatus::kNotOwner);
  EXPECT_EQ(state(), MutexWord::kLocked);
  EXPECT_EQ(owner(), self_);
  EXPECT_FALSE(word_.try_lock(kAsyncA));

  EXPECT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);
  EXPECT_EQ(state(), MutexWord::kUnlocked);
}

TEST_F(MutexWordTest, CorruptWordIsReportedNotWaitedOn) {
  // Shared memory that something else scribbled on must give an error, not a spin or a park that
  // nobody will ever end. These are values a MutexWord never writes: state 3, with and without
  // owner bits, and owner bits with state 0. The caller is an id none of them names as owner.
  const ThreadId caller = kAsyncB;
  for (const std::int32_t corrupt :
       {7, 3, -1, 4, MutexWord::held_by(kAsyncA, MutexWord::kUnlocked)}) {
    words_[0] = corrupt;
    EXPECT_FALSE(word_.try_lock(caller)) << corrupt;
    EXPECT_EQ(word_.lock(caller), LockStatus::kCorrupt) << corrupt;
    EXPECT_EQ(word_.lock(caller, HangGuard()), LockStatus::kCorrupt) << corrupt;

    RecordingWaiter waiter(caller);
    EXPECT_EQ(word_.lock_or_enqueue(caller, waiter, false), Outcome::kCorrupt) << corrupt;
    EXPECT_EQ(word_.lock_or_enqueue(caller, waiter, true), Outcome::kCorrupt) << corrupt;
    EXPECT_EQ(queued(), 0u);
    EXPECT_EQ(raw(), corrupt) << "the corrupt value must be left for diagnosis";
  }

  // The thread the owner bits name cannot release a word whose state is corrupt either.
  const std::int32_t corrupt_but_owned = MutexWord::held_by(self_, MutexWord::kLocked) | 3;
  words_[0] = corrupt_but_owned;
  EXPECT_EQ(word_.unlock(self_), UnlockStatus::kCorrupt);
  EXPECT_EQ(raw(), corrupt_but_owned);
}

TEST_F(MutexWordTest, TimedLockAcquiresWhenReleasedBeforeTheDeadline) {
  ASSERT_EQ(word_.lock(self_), LockStatus::kAcquired);
  LockStatus status = LockStatus::kCorrupt;
  ThreadGroup threads;
  threads.Start([&] {
    const ThreadId me = current_thread_id();
    status = word_.lock(me, HangGuard());
    if (status == LockStatus::kAcquired) {
      EXPECT_EQ(word_.unlock(me), UnlockStatus::kUnlocked);
    }
  });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 1; }));
  EXPECT_EQ(state(), MutexWord::kLockedParked);

  EXPECT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);
  threads.JoinOrAbort();
  EXPECT_EQ(status, LockStatus::kAcquired);
  EXPECT_EQ(state(), MutexWord::kUnlocked);
  EXPECT_EQ(queued(), 0u);
}

TEST_F(MutexWordTest, WaiterPastTheFairnessBoundIsHandedTheLockAtUnlock) {
  ASSERT_EQ(word_.lock(self_), LockStatus::kAcquired);
  std::atomic<ThreadId> waiter_thread{kNoThread};
  std::atomic<bool> inspected{false};
  LockStatus status = LockStatus::kCorrupt;
  ThreadGroup threads;
  threads.Start([&] {
    const ThreadId me = current_thread_id();
    waiter_thread = me;
    status = word_.lock(me, HangGuard());
    // Keep the lock until the main thread has looked at the words.
    EXPECT_TRUE(WaitUntil([&] { return inspected.load(); }));
    if (status == LockStatus::kAcquired) {
      EXPECT_EQ(word_.unlock(me), UnlockStatus::kUnlocked);
    }
  });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 1; }));
  const FairnessOverride fair(FairnessForTesting::kAlways);

  ASSERT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);

  // Handed over inside unlock, before the waiter even runs: there is no instant at which the
  // mutex is free for a newcomer to barge in.
  EXPECT_EQ(owner(), waiter_thread.load());
  EXPECT_EQ(state(), MutexWord::kLocked) << "nobody else waits, so the state is 1, not 2";
  if (word_.try_lock(self_)) {
    ADD_FAILURE() << "the mutex was free after an unlock that should have handed it off";
    word_.unlock(self_);
  }
  inspected = true;
  threads.JoinOrAbort();

  EXPECT_EQ(status, LockStatus::kAcquired);
  EXPECT_EQ(state(), MutexWord::kUnlocked);
  EXPECT_EQ(raw(), 0) << "an unlocked mutex is all zero";
}

TEST_F(MutexWordTest, ParkedWaitersAcquireInArrivalOrder) {
  constexpr int kWaiters = 5;
  ASSERT_EQ(word_.lock(self_), LockStatus::kAcquired);
  std::vector<int> order;  // guarded by the mutex under test
  ThreadGroup threads;
  for (int i = 0; i < kWaiters; ++i) {
    threads.Start([&, i] {
      const ThreadId me = current_thread_id();
      ASSERT_EQ(word_.lock(me, HangGuard()), LockStatus::kAcquired);
      order.push_back(i);
      EXPECT_EQ(word_.unlock(me), UnlockStatus::kUnlocked);
    });
    // One at a time, so the arrival order is the start order.
    ASSERT_TRUE(WaitUntil([&] { return queued() == i + 1u; }));
  }
  // Every waiter is then past the fairness bound at every unlock, so each unlock hands the lock
  // to the head of the queue and nobody can overtake.
  const FairnessOverride fair(FairnessForTesting::kAlways);

  ASSERT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);
  threads.JoinOrAbort();

  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(state(), MutexWord::kUnlocked);
  EXPECT_EQ(queued(), 0u);
}

TEST_F(MutexWordTest, TimeoutsAndInterruptsRacingUnlocksNeverStrandAWaiter) {
  // Waiters that give up (deadline or interrupt) while unlocks pick them must pass every wake-up
  // on. If one were swallowed, a plain lock() below would sleep forever and the group would abort.
  constexpr int kIterations = 1500;
  enum class Kind { kTimed, kInterruptible, kPlain };
  constexpr std::array<Kind, 6> kKinds = {Kind::kTimed,         Kind::kTimed, Kind::kInterruptible,
                                          Kind::kInterruptible, Kind::kPlain, Kind::kPlain};
  std::int64_t counter = 0;  // guarded by the mutex under test
  std::atomic<std::int64_t> acquisitions{0};
  ThreadGroup threads;
  for (const Kind kind : kKinds) {
    threads.Start([&, kind] {
      const ThreadId me = current_thread_id();
      int polls = 0;
      const auto every_third_poll = [&] { return ++polls % 3 == 0; };
      const Interrupt interrupt{std::chrono::microseconds(20), every_third_poll};
      for (int i = 0; i < kIterations; ++i) {
        LockStatus status = LockStatus::kCorrupt;
        switch (kind) {
          case Kind::kTimed:
            status = word_.lock(me, Deadline::after_ms((i % 4) * 0.05));  // 0 to 150 us
            break;
          case Kind::kInterruptible:
            status = with_interrupt(&interrupt, [&] { return word_.lock(me, HangGuard()); });
            break;
          case Kind::kPlain:
            status = word_.lock(me);
            break;
        }
        if (status != LockStatus::kAcquired) {
          ASSERT_TRUE(status == LockStatus::kTimedOut || status == LockStatus::kInterrupted)
              << static_cast<int>(status);
          continue;
        }
        ++counter;
        ++acquisitions;
        // Sometimes hold the lock across a reschedule so that waiters queue up behind it.
        if (i % 16 == 0) std::this_thread::yield();
        ASSERT_EQ(word_.unlock(me), UnlockStatus::kUnlocked);
      }
    });
  }
  threads.JoinOrAbort();

  EXPECT_EQ(counter, acquisitions.load());
  EXPECT_GE(acquisitions.load(), 2 * kIterations) << "the plain lockers always acquire";
  EXPECT_EQ(queued(), 0u);
  EXPECT_EQ(state(), MutexWord::kUnlocked);
  EXPECT_EQ(raw(), 0) << "an unlocked mutex is all zero";
}

TEST_F(MutexWordTest, InterruptedWaiterLeavesNoWaiterBehind) {
  ASSERT_EQ(word_.lock(self_), LockStatus::kAcquired);
  std::atomic<bool> stop{false};
  const auto stop_requested = [&] { return stop.load(); };
  const Interrupt interrupt{std::chrono::milliseconds(1), stop_requested};
  LockStatus status = LockStatus::kAcquired;
  ThreadGroup threads;
  threads.Start([&] {
    // No deadline: only the interrupt can end this wait.
    status = with_interrupt(&interrupt,
                            [&] { return word_.lock(current_thread_id(), Deadline::never()); });
  });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 1; }));

  stop = true;
  threads.JoinOrAbort(testing::kWaitLimit);

  EXPECT_EQ(status, LockStatus::kInterrupted);
  EXPECT_EQ(queued(), 0u);
  EXPECT_EQ(owner(), self_) << "the holder keeps the lock";
  EXPECT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);
  EXPECT_EQ(state(), MutexWord::kUnlocked) << "an unlock finding nobody queued must free the lock";
}

TEST_F(MutexWordTest, InterruptedWaiterThatWasHandedTheLockPassesItOn) {
  // Forces the race deterministically: the interrupted waiter's `requested` is called while it is
  // still queued and does not answer until the main thread's unlock has handed it the lock.
  ASSERT_EQ(word_.lock(self_), LockStatus::kAcquired);
  std::atomic<bool> polling{false};
  std::atomic<bool> unlocked{false};
  const auto requested_after_unlock = [&] {
    polling = true;
    EXPECT_TRUE(WaitUntil([&] { return unlocked.load(); }));
    return true;
  };
  const Interrupt interrupt{std::chrono::milliseconds(1), requested_after_unlock};
  std::atomic<ThreadId> interrupted_thread{kNoThread};
  LockStatus interrupted_status = LockStatus::kAcquired;
  LockStatus next_status = LockStatus::kCorrupt;
  int critical_sections = 0;  // guarded by the mutex under test

  ThreadGroup threads;
  threads.Start([&] {
    const ThreadId me = current_thread_id();
    interrupted_thread = me;
    interrupted_status =
        with_interrupt(&interrupt, [&] { return word_.lock(me, Deadline::never()); });
  });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 1; }));
  threads.Start([&] {
    const ThreadId me = current_thread_id();
    next_status = word_.lock(me, HangGuard());
    if (next_status != LockStatus::kAcquired) return;
    ++critical_sections;
    EXPECT_EQ(word_.unlock(me), UnlockStatus::kUnlocked);
  });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 2; }));
  ASSERT_TRUE(WaitUntil([&] { return polling.load(); }));
  const FairnessOverride fair(FairnessForTesting::kAlways);

  ASSERT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);
  EXPECT_EQ(owner(), interrupted_thread.load()) << "the head waiter should have been handed it";
  unlocked = true;
  threads.JoinOrAbort();

  EXPECT_EQ(interrupted_status, LockStatus::kInterrupted);
  EXPECT_EQ(next_status, LockStatus::kAcquired) << "the handed-off lock was not passed on";
  EXPECT_EQ(critical_sections, 1);
  EXPECT_EQ(queued(), 0u);
  EXPECT_EQ(state(), MutexWord::kUnlocked);
  EXPECT_EQ(raw(), 0) << "an unlocked mutex is all zero";
}

TEST_F(MutexWordTest, LockOrEnqueueAcquiresAFreeLockWithoutQueuing) {
  RecordingWaiter waiter(kAsyncA);
  EXPECT_EQ(word_.lock_or_enqueue(kAsyncA, waiter, false), Outcome::kAcquired);
  EXPECT_EQ(state(), MutexWord::kLocked);
  EXPECT_EQ(owner(), kAsyncA);
  EXPECT_EQ(queued(), 0u);
  EXPECT_EQ(word_.unlock(kAsyncA), UnlockStatus::kUnlocked);
  EXPECT_EQ(state(), MutexWord::kUnlocked);
}

TEST_F(MutexWordTest, AsyncWaiterPastTheFairnessBoundIsHandedTheLock) {
  const FairnessOverride fair(FairnessForTesting::kAlways);
  ASSERT_EQ(word_.lock(self_), LockStatus::kAcquired);
  RecordingWaiter waiter(kAsyncA);
  ASSERT_EQ(word_.lock_or_enqueue(kAsyncA, waiter, false), Outcome::kPending);
  EXPECT_EQ(state(), MutexWord::kLockedParked);
  EXPECT_EQ(queued(), 1u);

  ASSERT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);

  ASSERT_TRUE(waiter.WaitForWakes(1));
  EXPECT_EQ(waiter.tokens(), std::vector<WakeToken>{MutexWord::kHandedOff});
  EXPECT_EQ(owner(), kAsyncA);
  EXPECT_EQ(state(), MutexWord::kLocked);
  EXPECT_EQ(word_.unlock(kAsyncA), UnlockStatus::kUnlocked);
  EXPECT_EQ(state(), MutexWord::kUnlocked);
}

TEST_F(MutexWordTest, RecentAsyncWaiterIsReleasedToCompete) {
  const FairnessOverride fair(FairnessForTesting::kNever);
  ASSERT_EQ(word_.lock(self_), LockStatus::kAcquired);
  RecordingWaiter waiter(kAsyncA);
  ASSERT_EQ(word_.lock_or_enqueue(kAsyncA, waiter, false), Outcome::kPending);

  ASSERT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);

  ASSERT_TRUE(waiter.WaitForWakes(1));
  EXPECT_EQ(waiter.tokens(), std::vector<WakeToken>{MutexWord::kReleased});
  EXPECT_EQ(state(), MutexWord::kUnlocked);
  EXPECT_EQ(raw(), 0) << "an unlocked mutex is all zero";
  EXPECT_EQ(word_.lock_or_enqueue(kAsyncA, waiter, false), Outcome::kAcquired);
  EXPECT_EQ(state(), MutexWord::kLocked);
  EXPECT_EQ(word_.unlock(kAsyncA), UnlockStatus::kUnlocked);
}

TEST_F(MutexWordTest, WaiterReleasedWithOthersQueuedKeepsTheLockMarkedContended) {
  const FairnessOverride fair(FairnessForTesting::kNever);
  // The subtle invariant of mutex.h: a waiter woken by a release while others stay parked must
  // leave the state at 2, whether it takes the lock or loses it to a newcomer; otherwise the
  // next unlock takes the fast path and the remaining waiters sleep forever.
  ASSERT_EQ(word_.lock(self_), LockStatus::kAcquired);
  RecordingWaiter a(kAsyncA);
  RecordingWaiter b(kAsyncB);
  ASSERT_EQ(word_.lock_or_enqueue(kAsyncA, a, false), Outcome::kPending);
  ASSERT_EQ(word_.lock_or_enqueue(kAsyncB, b, false), Outcome::kPending);

  ASSERT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);
  ASSERT_TRUE(a.WaitForWakes(1));
  EXPECT_EQ(a.last_token(), MutexWord::kReleasedWithMoreWaiters);
  EXPECT_EQ(state(), MutexWord::kUnlocked);
  EXPECT_EQ(queued(), 1u);

  // A newcomer barges in before `a` acts on its wake-up; `a` finds it held, marks it and queues.
  ASSERT_TRUE(word_.try_lock(self_));
  EXPECT_EQ(state(), MutexWord::kLocked);
  ASSERT_EQ(word_.lock_or_enqueue(kAsyncA, a, /*must_mark_parked=*/true), Outcome::kPending);
  EXPECT_EQ(state(), MutexWord::kLockedParked);
  EXPECT_EQ(queued(), 2u);

  // The newcomer's unlock therefore takes the slow path and wakes `b`, first in line.
  ASSERT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);
  ASSERT_TRUE(b.WaitForWakes(1));
  EXPECT_EQ(b.last_token(), MutexWord::kReleasedWithMoreWaiters);
  EXPECT_EQ(a.wake_count(), 1u);

  // `b` finds the lock free and takes it, still marked contended because `a` waits.
  ASSERT_EQ(word_.lock_or_enqueue(kAsyncB, b, /*must_mark_parked=*/true), Outcome::kAcquired);
  EXPECT_EQ(state(), MutexWord::kLockedParked);
  EXPECT_EQ(owner(), kAsyncB);

  ASSERT_EQ(word_.unlock(kAsyncB), UnlockStatus::kUnlocked);
  ASSERT_TRUE(a.WaitForWakes(2));
  EXPECT_EQ(a.last_token(), MutexWord::kReleased);
  ASSERT_EQ(word_.lock_or_enqueue(kAsyncA, a, false), Outcome::kAcquired);
  EXPECT_EQ(state(), MutexWord::kLocked);
  EXPECT_EQ(word_.unlock(kAsyncA), UnlockStatus::kUnlocked);
  EXPECT_EQ(state(), MutexWord::kUnlocked);
  EXPECT_EQ(queued(), 0u);
}

TEST_F(MutexWordTest, HandedOffWaiterThatAbandonsPassesTheLockOn) {
  const FairnessOverride fair(FairnessForTesting::kAlways);
  ASSERT_EQ(word_.lock(self_), LockStatus::kAcquired);
  RecordingWaiter a(kAsyncA);
  RecordingWaiter b(kAsyncB);
  ASSERT_EQ(word_.lock_or_enqueue(kAsyncA, a, false), Outcome::kPending);
  ASSERT_EQ(word_.lock_or_enqueue(kAsyncB, b, false), Outcome::kPending);

  ASSERT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);
  ASSERT_TRUE(a.WaitForWakes(1));
  ASSERT_EQ(a.last_token(), MutexWord::kHandedOff);
  EXPECT_EQ(owner(), kAsyncA);
  EXPECT_EQ(state(), MutexWord::kLockedParked);

  // `a` no longer wants it (its wait timed out, say): the lock goes to `b`, not to nobody.
  word_.abandon_wake(kAsyncA, a.last_token());

  ASSERT_TRUE(b.WaitForWakes(1));
  EXPECT_EQ(b.last_token(), MutexWord::kHandedOff);
  EXPECT_EQ(owner(), kAsyncB);
  EXPECT_EQ(state(), MutexWord::kLocked);
  EXPECT_EQ(queued(), 0u);
  EXPECT_EQ(word_.unlock(kAsyncB), UnlockStatus::kUnlocked);
  EXPECT_EQ(state(), MutexWord::kUnlocked);
}

TEST_F(MutexWordTest, AbandoningInsideTheWakeCallbackPassesTheLockOn) {
  const FairnessOverride fair(FairnessForTesting::kAlways);
  // The wake callback runs with no bucket lock held, so it may unlock (and so unpark) at once.
  // If a bucket lock were held, this nested unpark would deadlock and the group would abort.
  ASSERT_EQ(word_.lock(self_), LockStatus::kAcquired);
  RecordingWaiter a(kAsyncA);
  RecordingWaiter b(kAsyncB);
  a.set_on_wake([&](WakeToken token) { word_.abandon_wake(kAsyncA, token); });
  ASSERT_EQ(word_.lock_or_enqueue(kAsyncA, a, false), Outcome::kPending);
  ASSERT_EQ(word_.lock_or_enqueue(kAsyncB, b, false), Outcome::kPending);

  UnlockStatus unlock_status = UnlockStatus::kCorrupt;
  ThreadGroup threads;
  // MutexWord checks ownership by id only, so another thread may release on this one's behalf.
  threads.Start([&, holder = self_] { unlock_status = word_.unlock(holder); });
  threads.JoinOrAbort(testing::kWaitLimit);

  EXPECT_EQ(unlock_status, UnlockStatus::kUnlocked);
  EXPECT_EQ(a.tokens(), std::vector<WakeToken>{MutexWord::kHandedOff});
  EXPECT_EQ(b.tokens(), std::vector<WakeToken>{MutexWord::kHandedOff});
  EXPECT_EQ(owner(), kAsyncB);
  EXPECT_EQ(word_.unlock(kAsyncB), UnlockStatus::kUnlocked);
  EXPECT_EQ(state(), MutexWord::kUnlocked);
}

TEST_F(MutexWordTest, ReleasedWaiterThatAbandonsWakesTheNext) {
  const FairnessOverride fair(FairnessForTesting::kNever);
  ASSERT_EQ(word_.lock(self_), LockStatus::kAcquired);
  RecordingWaiter a(kAsyncA);
  RecordingWaiter b(kAsyncB);
  ASSERT_EQ(word_.lock_or_enqueue(kAsyncA, a, false), Outcome::kPending);
  ASSERT_EQ(word_.lock_or_enqueue(kAsyncB, b, false), Outcome::kPending);
  ASSERT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);
  ASSERT_TRUE(a.WaitForWakes(1));
  ASSERT_EQ(a.last_token(), MutexWord::kReleasedWithMoreWaiters);
  ASSERT_EQ(state(), MutexWord::kUnlocked);

  // With the lock free, abandoning takes it and releases it again, which wakes `b`.
  word_.abandon_wake(kAsyncA, a.last_token());

  ASSERT_TRUE(b.WaitForWakes(1));
  EXPECT_EQ(b.last_token(), MutexWord::kReleased);
  EXPECT_EQ(state(), MutexWord::kUnlocked);
  EXPECT_EQ(raw(), 0) << "an unlocked mutex is all zero";
  EXPECT_EQ(queued(), 0u);
}

TEST_F(MutexWordTest, ReleasedWaiterThatAbandonsWhileANewcomerHoldsLeavesTheWakeToItsUnlock) {
  const FairnessOverride fair(FairnessForTesting::kNever);
  ASSERT_EQ(word_.lock(self_), LockStatus::kAcquired);
  RecordingWaiter a(kAsyncA);
  RecordingWaiter b(kAsyncB);
  ASSERT_EQ(word_.lock_or_enqueue(kAsyncA, a, false), Outcome::kPending);
  ASSERT_EQ(word_.lock_or_enqueue(kAsyncB, b, false), Outcome::kPending);
  ASSERT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);
  ASSERT_TRUE(a.WaitForWakes(1));
  ASSERT_EQ(a.last_token(), MutexWord::kReleasedWithMoreWaiters);
  ASSERT_TRUE(word_.try_lock(self_));  // the newcomer, on the fast path: state 1

  word_.abandon_wake(kAsyncA, a.last_token());

  EXPECT_EQ(state(), MutexWord::kLockedParked);
  EXPECT_EQ(owner(), self_);
  EXPECT_EQ(b.wake_count(), 0u);
  ASSERT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);
  ASSERT_TRUE(b.WaitForWakes(1));
  EXPECT_EQ(b.last_token(), MutexWord::kReleased);
  EXPECT_EQ(state(), MutexWord::kUnlocked);
  EXPECT_EQ(queued(), 0u);
}

TEST_F(MutexWordTest, AbandoningAPlainReleaseChangesNothing) {
  word_.abandon_wake(kAsyncA, MutexWord::kReleased);
  EXPECT_EQ(state(), MutexWord::kUnlocked);
  EXPECT_EQ(raw(), 0) << "an unlocked mutex is all zero";

  ASSERT_EQ(word_.lock(self_), LockStatus::kAcquired);
  word_.abandon_wake(kAsyncA, MutexWord::kReleased);
  EXPECT_EQ(state(), MutexWord::kLocked);
  EXPECT_EQ(owner(), self_);
  EXPECT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);
}

TEST_F(MutexWordTest, TimedOutBlockingWaiterThatWasLastClearsTheContendedState) {
  ASSERT_EQ(word_.lock(self_), LockStatus::kAcquired);
  ThreadGroup threads;
  LockStatus status = LockStatus::kCorrupt;
  threads.Start([&] { status = word_.lock(current_thread_id(), Deadline::after_ms(20)); });
  threads.JoinOrAbort();
  EXPECT_EQ(status, LockStatus::kTimedOut);
  EXPECT_EQ(queued(), 0u);
  EXPECT_EQ(state(), MutexWord::kLocked) << "no stale 2 outlives the last waiter";
  EXPECT_EQ(owner(), self_);
  EXPECT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);
  EXPECT_EQ(raw(), 0);
}

TEST_F(MutexWordTest, CancelledAsyncWaiterLeavesTheLockConsistent) {
  const FairnessOverride fair(FairnessForTesting::kAlways);
  ASSERT_EQ(word_.lock(self_), LockStatus::kAcquired);
  RecordingWaiter waiter(kAsyncA);
  ASSERT_EQ(word_.lock_or_enqueue(kAsyncA, waiter, false), Outcome::kPending);

  ASSERT_TRUE(word_.cancel(waiter));
  EXPECT_EQ(queued(), 0u);
  EXPECT_EQ(state(), MutexWord::kLocked) << "the last waiter out clears the contended state";
  EXPECT_EQ(owner(), self_);

  EXPECT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);
  EXPECT_EQ(state(), MutexWord::kUnlocked);
  EXPECT_EQ(raw(), 0) << "an unlocked mutex is all zero";
  EXPECT_EQ(waiter.wake_count(), 0u);
}

TEST_F(MutexWordTest, AsyncAndSyncLockersKeepAnExactCount) {
  // Asynchronous lockers drive lock_or_enqueue the way the binding does (queue, wait for the
  // token, act on it) and sometimes give up, cancelling or abandoning whatever they were given,
  // while synchronous lockers block with no deadline: a wake-up lost anywhere strands one of them.
  constexpr int kIterations = 1500;
  std::int64_t counter = 0;  // guarded by the mutex under test
  std::atomic<std::int64_t> acquisitions{0};
  std::atomic<int> give_ups{0};

  const auto async_locker = [&] {
    const ThreadId me = current_thread_id();
    for (int i = 0; i < kIterations; ++i) {
      const bool may_give_up = i % 3 == 0;
      RecordingWaiter waiter(me);
      std::size_t wakes_handled = 0;
      bool must_mark_parked = false;
      bool acquired = false;
      for (;;) {
        const Outcome step = word_.lock_or_enqueue(me, waiter, must_mark_parked);
        ASSERT_NE(step, Outcome::kCorrupt);
        if (step == Outcome::kAcquired) {
          acquired = true;
          break;
        }
        if (may_give_up && !waiter.WaitForWakes(wakes_handled + 1, 50us)) {
          ++give_ups;
          if (word_.cancel(waiter)) break;
          // An unlock took the waiter first: its token is on the way and must be passed on.
          ASSERT_TRUE(waiter.WaitForWakes(wakes_handled + 1));
          word_.abandon_wake(me, waiter.tokens()[wakes_handled]);
          break;
        }
        ASSERT_TRUE(waiter.WaitForWakes(wakes_handled + 1));
        const WakeToken token = waiter.tokens()[wakes_handled++];
        if (token == MutexWord::kHandedOff) {
          acquired = true;
          break;
        }
        must_mark_parked = token == MutexWord::kReleasedWithMoreWaiters;
      }
      if (!acquired) continue;
      ++counter;
      ++acquisitions;
      if (i % 8 == 0) std::this_thread::yield();
      ASSERT_EQ(word_.unlock(me), UnlockStatus::kUnlocked);
    }
  };
  const auto sync_locker = [&] {
    const ThreadId me = current_thread_id();
    for (int i = 0; i < kIterations; ++i) {
      ASSERT_EQ(word_.lock(me), LockStatus::kAcquired);
      ++counter;
      ++acquisitions;
      if (i % 8 == 0) std::this_thread::yield();
      ASSERT_EQ(word_.unlock(me), UnlockStatus::kUnlocked);
    }
  };

  ThreadGroup threads;
  threads.Start(async_locker);
  threads.Start(sync_locker);
  threads.Start(async_locker);
  threads.Start(sync_locker);
  threads.JoinOrAbort();

  EXPECT_EQ(counter, acquisitions.load());
  EXPECT_EQ(acquisitions.load() + give_ups.load(), 4 * kIterations);
  EXPECT_EQ(queued(), 0u);
  EXPECT_EQ(state(), MutexWord::kUnlocked);
  EXPECT_EQ(raw(), 0) << "an unlocked mutex is all zero";
}

// The one lock step serves both forms: a Promise wait queued first, a blocking wait behind it,
// each acquiring in turn as the other releases.
TEST_F(MutexWordTest, OneLockStepServesAPromiseWaitAndABlockingWait) {
  ASSERT_EQ(word_.lock(self_), LockStatus::kAcquired);
  testing::PromiseStep<MutexWord::LockStep> promise(testing::OnThread{kAsyncA}, word_, kAsyncA);
  ASSERT_EQ(promise.Start(), Outcome::kPending);
  std::atomic<Outcome> blocking{Outcome::kPending};
  std::thread blocked([&] {
    const ThreadId me = current_thread_id();
    MutexWord::LockStep step(word_, me);
    blocking = wait_blocking(step, HangGuard());
    if (blocking == Outcome::kAcquired) {
      EXPECT_EQ(word_.unlock(me), UnlockStatus::kUnlocked);
    }
  });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 2; }));
  ASSERT_EQ(word_.unlock(self_), UnlockStatus::kUnlocked);
  ASSERT_EQ(promise.Settle(), Outcome::kAcquired);
  EXPECT_EQ(owner(), kAsyncA);
  EXPECT_EQ(blocking.load(), Outcome::kPending);
  ASSERT_EQ(word_.unlock(kAsyncA), UnlockStatus::kUnlocked);
  blocked.join();
  EXPECT_EQ(blocking.load(), Outcome::kAcquired);
  EXPECT_EQ(raw(), MutexWord::kUnlocked);
  EXPECT_EQ(queued(), 0U);
}

}  // namespace
}  // namespace parklock
