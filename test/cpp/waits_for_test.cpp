// Deadlock detection across threads (waits_for.h), through the locks that publish their waits.
#include "lot/waits_for.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "lot/interrupt.h"
#include "primitives/mutex.h"
#include "primitives/rwlock.h"
#include "test_support.h"

namespace parklock {
namespace {

using namespace std::chrono_literals;
using testing::ThreadGroup;
using testing::WaitUntil;
using testing::with_interrupt;

// Node threads poll every 20 ms; these poll faster so that the tests run quickly.
const auto kNeverStop = [] { return false; };
const Interrupt kPolling{1ms, kNeverStop};

struct Ring {
  static constexpr int kMax = 4;
  alignas(4) std::array<std::int32_t, kMax> words{};
  MutexWord mutex(int i) { return MutexWord(&words[i]); }
};

// `n` threads each take mutex i, then (once all hold theirs) lock mutex i+1 mod n: a cycle. The
// one that gives up releases its mutex, and the others then finish.
void RunRing(int n) {
  Ring ring;
  std::atomic<int> holding{0};
  std::atomic<int> deadlocks{0};
  std::atomic<int> acquired{0};
  std::vector<std::vector<WaitsForEdge>> cycles(n);
  std::vector<ThreadId> ids(n);
  ThreadGroup threads;
  for (int i = 0; i < n; ++i) {
    threads.Start([&, i] {
      const ThreadId me = current_thread_id();
      ids[i] = me;
      ASSERT_EQ(ring.mutex(i).lock(me), LockStatus::kAcquired);
      ++holding;
      ASSERT_TRUE(WaitUntil([&] { return holding.load() == n; }));
      const LockStatus status = with_interrupt(
          &kPolling, [&] { return ring.mutex((i + 1) % n).lock(me, Deadline::after_ms(20'000)); });
      if (status == LockStatus::kDeadlock) {
        ++deadlocks;
        cycles[i] = take_deadlock_cycle();
      } else {
        EXPECT_EQ(status, LockStatus::kAcquired);
        ++acquired;
        EXPECT_EQ(ring.mutex((i + 1) % n).unlock(me), MutexWord::UnlockStatus::kUnlocked);
      }
      EXPECT_EQ(ring.mutex(i).unlock(me), MutexWord::UnlockStatus::kUnlocked);
    });
  }
  threads.JoinOrAbort();
  EXPECT_EQ(deadlocks.load(), 1);
  EXPECT_EQ(acquired.load(), n - 1);
  for (int i = 0; i < n; ++i) {
    if (cycles[i].empty()) continue;
    ASSERT_EQ(cycles[i].size(), static_cast<std::size_t>(n));
    EXPECT_EQ(cycles[i][0].thread, ids[i]) << "the cycle starts with the thread that gave up";
    for (int step = 0; step < n; ++step) {
      const int who = (i + step) % n;
      EXPECT_EQ(cycles[i][step].thread, ids[who]);
      EXPECT_EQ(cycles[i][step].address, &ring.words[(who + 1) % n]) << "waits for the next one";
      EXPECT_STREQ(cycles[i][step].kind, "mutex");
    }
    for (int other = 0; other < n; ++other)
      EXPECT_LE(ids[other], ids[i]) << "the youngest gives up";
  }
  for (std::int32_t word : ring.words) EXPECT_EQ(word, 0);
}

TEST(WaitsForTest, TwoThreadsLockingInOppositeOrdersExactlyOneGivesUp) {
  RunRing(2);
}

TEST(WaitsForTest, ACycleOfThreeIsFoundByExactlyOneOfThem) {
  RunRing(3);
}

TEST(WaitsForTest, AWriterAndAMutexHolderInACycleAreFound) {
  alignas(4) std::int32_t mutex_word = 0;
  alignas(4) std::int32_t rw_words[RwLockWords::kWordCount] = {};
  MutexWord mutex(&mutex_word);
  RwLockWords rwlock(rw_words);
  std::atomic<int> holding{0};
  std::atomic<int> deadlocks{0};
  ThreadGroup threads;
  threads.Start([&] {
    const ThreadId me = current_thread_id();
    ASSERT_EQ(mutex.lock(me), LockStatus::kAcquired);
    ++holding;
    ASSERT_TRUE(WaitUntil([&] { return holding.load() == 2; }));
    const LockStatus status = with_interrupt(
        &kPolling, [&] { return rwlock.lock_shared(me, Deadline::after_ms(20'000)); });
    if (status == LockStatus::kDeadlock) {
      ++deadlocks;
    } else {
      EXPECT_EQ(status, LockStatus::kAcquired);
      EXPECT_EQ(rwlock.unlock_shared(), RwLockWords::UnlockStatus::kUnlocked);
    }
    EXPECT_EQ(mutex.unlock(me), MutexWord::UnlockStatus::kUnlocked);
  });
  threads.Start([&] {
    const ThreadId me = current_thread_id();
    ASSERT_EQ(rwlock.lock(me), LockStatus::kAcquired);
    ++holding;
    ASSERT_TRUE(WaitUntil([&] { return holding.load() == 2; }));
    const LockStatus status =
        with_interrupt(&kPolling, [&] { return mutex.lock(me, Deadline::after_ms(20'000)); });
    if (status == LockStatus::kDeadlock) {
      ++deadlocks;
    } else {
      EXPECT_EQ(status, LockStatus::kAcquired);
      EXPECT_EQ(mutex.unlock(me), MutexWord::UnlockStatus::kUnlocked);
    }
    EXPECT_EQ(rwlock.unlock(me), RwLockWords::UnlockStatus::kUnlocked);
  });
  threads.JoinOrAbort();
  EXPECT_EQ(deadlocks.load(), 1);
  EXPECT_EQ(mutex_word, 0);
  EXPECT_EQ(rw_words[0], 0);
}

TEST(WaitsForTest, NoFalsePositiveUnderHeavyContentionInAConsistentOrder) {
  // Every thread takes the mutexes in the same order, holding the first while waiting for the
  // second: long waits, chains of waiters, never a cycle.
  constexpr int kThreads = 4;
  constexpr int kIterations = 3000;
  Ring ring;
  std::int64_t counter = 0;  // guarded by mutex 1
  std::atomic<int> deadlocks{0};
  ThreadGroup threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.Start([&] {
      const ThreadId me = current_thread_id();
      const InterruptScope scope(&kPolling);
      for (int i = 0; i < kIterations; ++i) {
        if (ring.mutex(0).lock(me) == LockStatus::kDeadlock) ++deadlocks;
        if (ring.mutex(1).lock(me) == LockStatus::kDeadlock) ++deadlocks;
        ++counter;
        if (i % 500 == 0) std::this_thread::sleep_for(2ms);  // waits long enough to be polled
        ring.mutex(1).unlock(me);
        ring.mutex(0).unlock(me);
      }
    });
  }
  threads.JoinOrAbort();
  EXPECT_EQ(deadlocks.load(), 0);
  EXPECT_EQ(counter, std::int64_t{kThreads} * kIterations);
}

}  // namespace
}  // namespace parklock
