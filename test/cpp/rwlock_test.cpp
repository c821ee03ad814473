// Tests of the readers-writer lock (rwlock.h) with real threads: exclusion checked by exact
// counters and untorn multi-word updates, readers that really share, FIFO grants that keep a
// writer from being starved, ownership and corrupt-word checks, and waiters that give up (timeout,
// interrupt, cancel, abandoned grant) without losing a grant or leaving a waiter behind.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <shared_mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "lot/atomic_ref.h"
#include "lot/owner_death.h"
#include "primitives/rwlock_lockable.h"
#include "primitives/rwlock_steps.h"
#include "test_support.h"

namespace parklock {
namespace {

using namespace std::chrono_literals;
using parking_lot::FairnessForTesting;
using testing::FairnessOverride;
using testing::kHangGuardMs;
using testing::ThreadGroup;
using testing::WaitUntil;
using testing::with_interrupt;
using LockStatus = RwLockWords::LockStatus;
using UnlockStatus = RwLockWords::UnlockStatus;

constexpr std::int32_t kW = RwLockWords::kWriter;
constexpr std::int32_t kP = RwLockWords::kParked;
constexpr std::int32_t kU = RwLockWords::kUpgradable;
constexpr std::int32_t kG = RwLockWords::kDraining;
constexpr std::int32_t Readers(std::int32_t n) {
  return n * RwLockWords::kOneReader;
}

// Identities for asynchronous waiters without a thread of their own. current_thread_id() hands
// out small consecutive ids, so these never collide with a real thread of this process.
constexpr ThreadId kAsyncA = 0x7fff0001;
constexpr ThreadId kAsyncB = 0x7fff0002;
constexpr ThreadId kAsyncC = 0x7fff0003;

// A deadline for calls that should succeed: a lost grant then ends as kTimedOut, a readable
// failure, instead of hanging the suite.
Deadline HangGuard() {
  return Deadline::after_ms(kHangGuardMs);
}

// An asynchronous waiter (what the binding queues for lockAsync / lockSharedAsync) asking for one
// mode, that records the grants it receives.
class GrantWaiter final : public Waiter {
 public:
  static GrantWaiter Shared(ThreadId thread) {
    return GrantWaiter(thread, RwLockWords::kSharedRequest);
  }
  static GrantWaiter Exclusive(ThreadId thread) {
    return GrantWaiter(thread, RwLockWords::exclusive_request(thread));
  }
  static GrantWaiter Upgradable(ThreadId thread) {
    return GrantWaiter(thread, RwLockWords::upgradable_request(thread));
  }
  // The asynchronous upgrade of `thread`'s upgradable read hold.
  static GrantWaiter Upgrade(ThreadId thread) {
    return GrantWaiter(thread, RwLockWords::kUpgradeRequest);
  }
  ~GrantWaiter() override {
    if (parking_lot::cancel(*this)) ADD_FAILURE() << "a GrantWaiter was destroyed while queued";
  }

  std::vector<WakeToken> tokens() const {
    std::lock_guard<std::mutex> guard(lock_);
    return tokens_;
  }
  bool WaitForWakes(std::size_t count, std::chrono::nanoseconds limit = testing::kWaitLimit) {
    std::unique_lock<std::mutex> guard(lock_);
    return woken_.wait_for(guard, limit, [&] { return tokens_.size() >= count; });
  }

 private:
  GrantWaiter(ThreadId thread, std::int64_t request) noexcept
      : Waiter(thread, Clock::now(), request) {}

  void on_unparked(WakeToken token) noexcept override {
    std::lock_guard<std::mutex> guard(lock_);
    tokens_.push_back(token);
    woken_.notify_all();
  }

  mutable std::mutex lock_;
  std::condition_variable woken_;
  std::vector<WakeToken> tokens_;  // guarded by lock_
};

// A lock wait of `thread` in one mode, run as the binding runs a Promise wait.
class PromiseLock : public testing::PromiseStep<RwLockWords::LockStep> {
 public:
  PromiseLock(RwLockWords lock, RwLockWords::Mode mode, ThreadId thread)
      : PromiseStep(testing::OnThread{thread}, lock, mode, thread) {}
};

// A lock over raw memory, as the binding uses it over a SharedArrayBuffer.
class RwLockWordsTest : public ::testing::Test {
 protected:
  std::int32_t state() { return atomic_ref<std::int32_t>(words_[0]).load(); }
  std::int32_t owner() { return atomic_ref<std::int32_t>(words_[1]).load(); }
  std::size_t queued() { return parking_lot::queued_count(lock_.address()); }
  std::size_t draining() { return parking_lot::queued_count(lock_.drain_key()); }
  void ExpectClean() {
    EXPECT_EQ(state(), 0) << "an unlocked lock is all zero";
    EXPECT_EQ(owner(), 0);
    EXPECT_EQ(queued(), 0u);
  }
  // A writer on a thread of `threads` that queues (the caller holds the lock), stores how its
  // lock() ended in `outcome` and releases what it acquired.
  void StartQueuedWriter(ThreadGroup& threads, LockStatus& outcome) {
    threads.Start([&] {
      const ThreadId me = current_thread_id();
      outcome = lock_.lock(me, HangGuard());
      if (outcome == LockStatus::kAcquired) {
        EXPECT_EQ(lock_.unlock(me), UnlockStatus::kUnlocked);
      }
    });
    ASSERT_TRUE(WaitUntil([&] { return queued() == 1; }));
  }
  // Queues `waiters` behind this thread's write hold, the first a writer, and releases it outside
  // a fair turn (the caller pins kNever): the writer is woken to compete, the others sleep on.
  void ReleaseToACompetitor(std::initializer_list<GrantWaiter*> waiters) {
    ASSERT_EQ(lock_.lock(self_), LockStatus::kAcquired);
    for (GrantWaiter* waiter : waiters) {
      ASSERT_EQ(lock_.lock_or_enqueue(waiter->thread(), *waiter), Outcome::kPending);
    }
    ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
    ASSERT_TRUE((*waiters.begin())->WaitForWakes(1));
    EXPECT_EQ((*waiters.begin())->tokens(), std::vector<WakeToken>{RwLockWords::kCompete});
    EXPECT_EQ(state(), 0) << "free, and without the parked bit, although others still wait";
    EXPECT_EQ(queued(), waiters.size() - 1);
  }
  // Releases this thread's upgradable read hold while waiters are parked; during the release's
  // grant step, another reader's hold leaves on the fast path.
  void ReleaseUpgradableAsTheOtherReaderLeaves() {
    bool left = false;
    {
      const testing::OnceInNextGrantStep other_reader_leaves(
          [&] { left = lock_.unlock_shared() == UnlockStatus::kUnlocked; });
      ASSERT_EQ(lock_.unlock_upgradable(self_), UnlockStatus::kUnlocked);
    }
    EXPECT_TRUE(left) << "the other reader left on the fast path during the release";
  }

  alignas(RwLockWords::kAlign) std::int32_t words_[RwLockWords::kWordCount] = {};
  RwLockWords lock_{words_};
  const ThreadId self_ = current_thread_id();
};

TEST_F(RwLockWordsTest, WriteLockRecordsTheOwnerAndUnlockClearsBothWords) {
  ASSERT_EQ(lock_.lock(self_), LockStatus::kAcquired);
  EXPECT_EQ(state(), kW);
  EXPECT_EQ(owner(), self_);
  EXPECT_TRUE(lock_.is_locked());
  EXPECT_TRUE(lock_.is_write_locked());
  EXPECT_EQ(lock_.readers(), 0);
  EXPECT_FALSE(lock_.try_lock(kAsyncA));
  EXPECT_FALSE(lock_.try_lock_shared());

  EXPECT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, ReadersShareAndAreCounted) {
  for (int n = 1; n <= 3; ++n) {
    ASSERT_TRUE(lock_.try_lock_shared());
    EXPECT_EQ(state(), Readers(n));
  }
  ASSERT_EQ(lock_.lock_shared(self_, HangGuard()), LockStatus::kAcquired);
  EXPECT_EQ(lock_.readers(), 4);
  EXPECT_TRUE(lock_.is_locked());
  EXPECT_FALSE(lock_.is_write_locked());
  EXPECT_FALSE(lock_.try_lock(self_)) << "a writer cannot join readers";
  EXPECT_EQ(owner(), 0);
  for (int n = 3; n >= 0; --n) {
    ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
    EXPECT_EQ(lock_.readers(), n);
  }
  ExpectClean();
}

TEST(RwLockTest, WritersExcludeEveryoneAndReadersNeverSeeATornUpdate) {
  // Writers copy one value into several plain words and bump a plain counter; readers check the
  // words all agree. Under a broken lock both the count and the agreement fail (and TSAN reports
  // the races, since none of these words is atomic).
  constexpr int kWriters = 3;
  constexpr int kReaders = 4;
  constexpr int kWrites = 2000;
  constexpr int kReads = 4000;
  RwLock lock;
  std::array<std::int64_t, 6> words{};
  std::int64_t writes = 0;
  std::atomic<int> torn{0};
  std::atomic<int> readers_inside{0};
  std::atomic<int> max_readers_inside{0};
  ThreadGroup threads;
  for (int t = 0; t < kWriters; ++t) {
    threads.Start([&] {
      for (int i = 0; i < kWrites; ++i) {
        std::unique_lock<RwLock> guard(lock);
        EXPECT_EQ(readers_inside.load(), 0);
        const std::int64_t next = writes + 1;
        for (std::int64_t& word : words) {
          word = next;
          if (i % 128 == 0) std::this_thread::yield();  // widen the window for a torn read
        }
        writes = next;
      }
    });
  }
  for (int t = 0; t < kReaders; ++t) {
    threads.Start([&] {
      for (int i = 0; i < kReads; ++i) {
        std::shared_lock<RwLock> guard(lock);
        const int inside = ++readers_inside;
        int seen_max = max_readers_inside.load();
        while (inside > seen_max && !max_readers_inside.compare_exchange_weak(seen_max, inside)) {
        }
        const std::int64_t first = words[0];
        if (i % 64 == 0) std::this_thread::yield();
        for (const std::int64_t word : words) {
          if (word != first) ++torn;
        }
        --readers_inside;
      }
    });
  }
  threads.JoinOrAbort();
  EXPECT_EQ(writes, std::int64_t{kWriters} * kWrites);
  for (const std::int64_t word : words) EXPECT_EQ(word, writes);
  EXPECT_EQ(torn.load(), 0);
  EXPECT_GE(max_readers_inside.load(), 1);
}

TEST_F(RwLockWordsTest, AReaderAcquiresWhileAnotherReaderHolds) {
  // Readers really overlap: the second reader gets in while the first still holds (and the first
  // releases only after the second is inside).
  ASSERT_EQ(lock_.lock_shared(self_), LockStatus::kAcquired);
  std::atomic<bool> second_inside{false};
  LockStatus status = LockStatus::kCorrupt;
  ThreadGroup threads;
  threads.Start([&] {
    status = lock_.lock_shared(current_thread_id(), HangGuard());
    second_inside = true;
  });
  ASSERT_TRUE(WaitUntil([&] { return second_inside.load(); }));
  EXPECT_EQ(status, LockStatus::kAcquired);
  EXPECT_EQ(state(), Readers(2));
  threads.JoinOrAbort();
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, AWriterWaitingBehindReadersIsServedBeforeReadersThatArriveLater) {
  ASSERT_TRUE(lock_.try_lock_shared());
  std::mutex order_lock;
  std::vector<char> order;
  const auto record = [&](char who) {
    std::lock_guard<std::mutex> guard(order_lock);
    order.push_back(who);
  };
  ThreadGroup threads;
  threads.Start([&] {
    const ThreadId me = current_thread_id();
    ASSERT_EQ(lock_.lock(me, HangGuard()), LockStatus::kAcquired);
    record('W');
    EXPECT_EQ(lock_.unlock(me), UnlockStatus::kUnlocked);
  });
  // Nobody queued: the writer drains the readers at once, on its own key.
  ASSERT_TRUE(WaitUntil([&] { return draining() == 1; }));
  EXPECT_EQ(state(), Readers(1) | kG);
  EXPECT_EQ(queued(), 0u);
  EXPECT_FALSE(lock_.try_lock_shared()) << "a newcomer reader must not pass the waiting writer";

  threads.Start([&] {
    ASSERT_EQ(lock_.lock_shared(current_thread_id(), HangGuard()), LockStatus::kAcquired);
    record('R');
    EXPECT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 1; }));
  EXPECT_EQ(state(), Readers(1) | kG | kP);

  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  threads.JoinOrAbort();
  EXPECT_EQ(order, (std::vector<char>{'W', 'R'}));
  ExpectClean();
}

TEST(RwLockTest, AStreamOfOverlappingReadersCannotStarveAWriter) {
  // Two readers keep the lock read-held at all times (each re-acquires before the other
  // releases). A reader-preferring lock would never let the writer in, and the group would abort.
  constexpr int kWriterRounds = 50;
  RwLock lock;
  std::atomic<bool> done{false};
  std::atomic<int> writer_rounds{0};
  ThreadGroup threads;
  for (int t = 0; t < 2; ++t) {
    threads.Start([&] {
      while (!done.load()) {
        std::shared_lock<RwLock> guard(lock);
        std::this_thread::sleep_for(50us);
      }
    });
  }
  threads.Start([&] {
    for (int i = 0; i < kWriterRounds; ++i) {
      std::unique_lock<RwLock> guard(lock);
      ++writer_rounds;
    }
    done = true;
  });
  threads.JoinOrAbort();
  EXPECT_EQ(writer_rounds.load(), kWriterRounds);
}

TEST(RwLockTest, AWriterBesideReadersThatReEnterAtOnceGetsAShareOfTheLock) {
  // Four readers each hold the lock about 2 us and take it again at once, so on a machine with
  // fewer cores than threads some reader nearly always holds it. A writer that waits without
  // keeping later readers out waits as long as they keep coming: it used to write a few dozen
  // times a second against tens of thousands of reads per reader. A writer whose arrival stops new
  // readers waits only for the reads under way, so its writes are counted against the reads.
  constexpr int kReaders = 4;
  RwLock lock;
  std::atomic<bool> go{false};
  std::atomic<bool> done{false};
  std::atomic<long> reads{0};
  long writes = 0;
  ThreadGroup threads;
  for (int t = 0; t < kReaders; ++t) {
    threads.Start([&] {
      while (!go.load()) std::this_thread::yield();
      while (!done.load()) {
        std::shared_lock<RwLock> guard(lock);
        const auto until = std::chrono::steady_clock::now() + 2us;
        while (std::chrono::steady_clock::now() < until) {
        }
        reads.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  threads.Start([&] {
    while (!go.load()) std::this_thread::yield();
    while (!done.load()) {
      std::unique_lock<RwLock> guard(lock);
      ++writes;
    }
  });
  go = true;
  std::this_thread::sleep_for(500ms);
  done = true;
  threads.JoinOrAbort();
  EXPECT_GE(writes * 10, reads.load() / kReaders)
      << writes << " writes against " << reads.load() << " reads by " << kReaders << " readers";
}

TEST_F(RwLockWordsTest, DowngradeWithoutWaitersLeavesOneReadHold) {
  ASSERT_EQ(lock_.lock(self_), LockStatus::kAcquired);
  ASSERT_EQ(lock_.downgrade(self_), UnlockStatus::kUnlocked);
  EXPECT_EQ(state(), Readers(1));
  EXPECT_EQ(owner(), 0);
  EXPECT_FALSE(lock_.try_lock(self_)) << "read-held";
  EXPECT_TRUE(lock_.try_lock_shared());
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  EXPECT_EQ(state(), 0);
}

TEST_F(RwLockWordsTest, DowngradeGrantsTheReadersAtTheHeadAndKeepsTheWriterWaiting) {
  const FairnessOverride fair(FairnessForTesting::kAlways);  // every release hands on
  ASSERT_EQ(lock_.lock(self_), LockStatus::kAcquired);
  GrantWaiter r1 = GrantWaiter::Shared(kAsyncA);
  GrantWaiter r2 = GrantWaiter::Shared(kAsyncB);
  GrantWaiter w3 = GrantWaiter::Exclusive(kAsyncC);
  for (GrantWaiter* waiter : {&r1, &r2, &w3}) {
    ASSERT_EQ(lock_.lock_or_enqueue(waiter->thread(), *waiter), Outcome::kPending);
  }
  ASSERT_EQ(lock_.downgrade(self_), UnlockStatus::kUnlocked);
  ASSERT_TRUE(r1.WaitForWakes(1));
  ASSERT_TRUE(r2.WaitForWakes(1));
  EXPECT_EQ(state(), Readers(3) | kP) << "this thread's read hold and the two granted";
  EXPECT_EQ(owner(), 0);
  EXPECT_TRUE(w3.tokens().empty());

  EXPECT_EQ(lock_.downgrade(self_), UnlockStatus::kNotOwner) << "no longer the writer";
  for (int i = 0; i < 3; ++i) ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ASSERT_TRUE(w3.WaitForWakes(1));
  EXPECT_EQ(w3.tokens(), std::vector<WakeToken>{RwLockWords::kGrantedExclusive});
  EXPECT_EQ(owner(), kAsyncC);
  ASSERT_EQ(lock_.unlock(kAsyncC), UnlockStatus::kUnlocked);
  EXPECT_EQ(state(), 0);
}

TEST_F(RwLockWordsTest, AReleaseGrantsTheReadersAtTheHeadUpToTheFirstWriter) {
  const FairnessOverride fair(FairnessForTesting::kAlways);  // every release hands on
  ASSERT_EQ(lock_.lock(self_), LockStatus::kAcquired);
  GrantWaiter r1 = GrantWaiter::Shared(kAsyncA);
  GrantWaiter r2 = GrantWaiter::Shared(kAsyncB);
  GrantWaiter w3 = GrantWaiter::Exclusive(kAsyncC);
  GrantWaiter r4 = GrantWaiter::Shared(kAsyncA);
  for (GrantWaiter* waiter : {&r1, &r2, &w3, &r4}) {
    ASSERT_EQ(lock_.lock_or_enqueue(waiter->thread(), *waiter), Outcome::kPending);
  }
  EXPECT_EQ(state(), kW | kP);
  EXPECT_EQ(queued(), 4u);

  // The writer's release hands the lock to r1 and r2 together; w3 is next, r4 stays behind it.
  ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
  ASSERT_TRUE(r1.WaitForWakes(1));
  ASSERT_TRUE(r2.WaitForWakes(1));
  EXPECT_EQ(r1.tokens(), std::vector<WakeToken>{RwLockWords::kGrantedShared});
  EXPECT_EQ(r2.tokens(), std::vector<WakeToken>{RwLockWords::kGrantedShared});
  EXPECT_EQ(state(), Readers(2) | kP);
  EXPECT_EQ(owner(), 0);
  EXPECT_EQ(queued(), 2u);

  // The first reader's release is a plain one; the last hands the lock to the writer alone.
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  EXPECT_EQ(w3.tokens().size(), 0u);
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ASSERT_TRUE(w3.WaitForWakes(1));
  EXPECT_EQ(w3.tokens(), std::vector<WakeToken>{RwLockWords::kGrantedExclusive});
  EXPECT_EQ(state(), kW | kP);
  EXPECT_EQ(owner(), kAsyncC) << "a granted writer gets its owner word set for it";
  EXPECT_EQ(r4.tokens().size(), 0u);

  // The last waiter: granted, and the parked bit goes with the queue.
  ASSERT_EQ(lock_.unlock(kAsyncC), UnlockStatus::kUnlocked);
  ASSERT_TRUE(r4.WaitForWakes(1));
  EXPECT_EQ(state(), Readers(1));
  EXPECT_EQ(owner(), 0);
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, LockOrEnqueueAcquiresAnAvailableLockWithoutQueuing) {
  GrantWaiter writer = GrantWaiter::Exclusive(kAsyncA);
  EXPECT_EQ(lock_.lock_or_enqueue(writer.thread(), writer), Outcome::kAcquired);
  EXPECT_EQ(state(), kW);
  EXPECT_EQ(owner(), kAsyncA);
  ASSERT_EQ(lock_.unlock(kAsyncA), UnlockStatus::kUnlocked);

  GrantWaiter r1 = GrantWaiter::Shared(kAsyncA);
  GrantWaiter r2 = GrantWaiter::Shared(kAsyncB);
  EXPECT_EQ(lock_.lock_or_enqueue(r1.thread(), r1), Outcome::kAcquired);
  EXPECT_EQ(lock_.lock_or_enqueue(r2.thread(), r2), Outcome::kAcquired);
  EXPECT_EQ(state(), Readers(2));
  EXPECT_EQ(queued(), 0u);
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, TheWriteHolderIsRefusedEitherLockInsteadOfDeadlocking) {
  ASSERT_EQ(lock_.lock(self_), LockStatus::kAcquired);
  EXPECT_EQ(lock_.lock(self_), LockStatus::kAlreadyHeld);
  EXPECT_EQ(lock_.lock(self_, HangGuard()), LockStatus::kAlreadyHeld);
  EXPECT_EQ(lock_.lock_shared(self_), LockStatus::kAlreadyHeld);
  EXPECT_EQ(lock_.lock_shared(self_, HangGuard()), LockStatus::kAlreadyHeld);
  EXPECT_EQ(state(), kW) << "a refused lock must not announce a waiter";
  EXPECT_EQ(owner(), self_);
  ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST(RwLockTest, RecursiveLockThrowsDeadlockErrorAndTimedLocksTimeOut) {
  RwLock lock;
  lock.lock();
  for (const bool shared : {false, true}) {
    try {
      shared ? lock.lock_shared() : lock.lock();
      ADD_FAILURE() << "a recursive lock returned";
    } catch (const std::system_error& error) {
      EXPECT_EQ(error.code(), std::errc::resource_deadlock_would_occur);
    }
  }
  EXPECT_FALSE(lock.try_lock_for(1ms));
  EXPECT_FALSE(lock.try_lock_shared_for(1ms));
  bool other_got_it = true;
  std::thread([&] { other_got_it = lock.try_lock_shared_for(5ms); }).join();
  EXPECT_FALSE(other_got_it);
  lock.unlock();

  // A read-to-write upgrade is not detected: with a timeout it just times out.
  lock.lock_shared();
  EXPECT_FALSE(lock.try_lock_for(5ms));
  EXPECT_TRUE(lock.try_lock_shared_for(5ms));
  lock.unlock_shared();
  lock.unlock_shared();
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

TEST_F(RwLockWordsTest, ReleasesThatDoNotMatchAHoldAreRefused) {
  EXPECT_EQ(lock_.unlock(self_), UnlockStatus::kNotOwner) << "write-unlocking a free lock";
  EXPECT_EQ(lock_.unlock_shared(), UnlockStatus::kNotOwner) << "read-unlocking a free lock";
  ExpectClean();

  ASSERT_EQ(lock_.lock(self_), LockStatus::kAcquired);
  UnlockStatus from_other = UnlockStatus::kUnlocked;
  std::thread([&] { from_other = lock_.unlock(current_thread_id()); }).join();
  EXPECT_EQ(from_other, UnlockStatus::kNotOwner);
  EXPECT_EQ(lock_.unlock_shared(), UnlockStatus::kNotOwner) << "read-unlocking a write lock";
  EXPECT_EQ(state(), kW);
  EXPECT_EQ(owner(), self_);
  ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);

  ASSERT_TRUE(lock_.try_lock_shared());
  EXPECT_EQ(lock_.unlock(self_), UnlockStatus::kNotOwner) << "write-unlocking a read lock";
  EXPECT_EQ(state(), Readers(1));
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  EXPECT_EQ(lock_.unlock_shared(), UnlockStatus::kNotOwner) << "one release too many";
  ExpectClean();
}

TEST_F(RwLockWordsTest, CorruptWordsAreReportedNotWaitedOn) {
  // Values the lock never writes: negative, writer and readers together, parked alone.
  for (const std::int32_t corrupt : {-1, -4, kW | Readers(1), kW | Readers(3) | kP, kP}) {
    words_[0] = corrupt;
    words_[1] = 0;
    EXPECT_FALSE(lock_.try_lock(self_)) << corrupt;
    EXPECT_FALSE(lock_.try_lock_shared()) << corrupt;
    EXPECT_EQ(lock_.lock(self_), LockStatus::kCorrupt) << corrupt;
    EXPECT_EQ(lock_.lock(self_, HangGuard()), LockStatus::kCorrupt) << corrupt;
    EXPECT_EQ(lock_.lock_shared(self_), LockStatus::kCorrupt) << corrupt;
    EXPECT_EQ(lock_.unlock_shared(), UnlockStatus::kCorrupt) << corrupt;
    EXPECT_EQ(lock_.unlock(self_), UnlockStatus::kCorrupt) << corrupt;
    GrantWaiter writer = GrantWaiter::Exclusive(kAsyncA);
    GrantWaiter reader = GrantWaiter::Shared(kAsyncB);
    EXPECT_EQ(lock_.lock_or_enqueue(writer.thread(), writer), Outcome::kCorrupt) << corrupt;
    EXPECT_EQ(lock_.lock_or_enqueue(reader.thread(), reader), Outcome::kCorrupt) << corrupt;
    EXPECT_EQ(queued(), 0u);
    EXPECT_EQ(state(), corrupt) << "the corrupt value must be left for diagnosis";
  }
  // The owner word names this thread, but the state says nobody writes.
  words_[0] = Readers(1);
  words_[1] = self_;
  EXPECT_EQ(lock_.unlock(self_), UnlockStatus::kCorrupt);
  words_[0] = 0;
  EXPECT_EQ(lock_.unlock(self_), UnlockStatus::kCorrupt);
  words_[1] = 0;
  ExpectClean();
}

TEST_F(RwLockWordsTest, TimedOutWaitersLeaveNoWaiterAndNoParkedBit) {
  ASSERT_EQ(lock_.lock(self_), LockStatus::kAcquired);
  LockStatus reader = LockStatus::kAcquired;
  LockStatus writer = LockStatus::kAcquired;
  ThreadGroup threads;
  threads.Start([&] { reader = lock_.lock_shared(current_thread_id(), Deadline::after_ms(5)); });
  threads.Start([&] { writer = lock_.lock(current_thread_id(), Deadline::after_ms(5)); });
  threads.JoinOrAbort();
  EXPECT_EQ(reader, LockStatus::kTimedOut);
  EXPECT_EQ(writer, LockStatus::kTimedOut);
  EXPECT_EQ(queued(), 0u);
  EXPECT_EQ(state(), kW) << "the last waiter to leave clears the parked bit";
  EXPECT_EQ(owner(), self_);
  EXPECT_EQ(lock_.lock_shared(self_, Deadline::after_ms(0)), LockStatus::kAlreadyHeld);
  ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, ReadersBehindAWriterThatGivesUpJoinTheReadersHoldingTheLock) {
  ASSERT_TRUE(lock_.try_lock_shared());
  GrantWaiter writer = GrantWaiter::Exclusive(kAsyncA);
  GrantWaiter reader = GrantWaiter::Shared(kAsyncB);
  ASSERT_EQ(lock_.lock_or_enqueue(writer.thread(), writer), Outcome::kPending);
  ASSERT_EQ(lock_.lock_or_enqueue(reader.thread(), reader), Outcome::kPending);
  EXPECT_EQ(state(), Readers(1) | kP);

  // The writer's wait is cancelled (its timeout or abort): the reader behind it needs no release.
  ASSERT_TRUE(lock_.cancel(writer));
  ASSERT_TRUE(reader.WaitForWakes(1));
  EXPECT_EQ(reader.tokens(), std::vector<WakeToken>{RwLockWords::kGrantedShared});
  EXPECT_EQ(state(), Readers(2));
  EXPECT_EQ(queued(), 0u);
  EXPECT_TRUE(writer.tokens().empty());
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, AReleaseOutsideAFairTurnWakesTheWriterToCompeteAndARunningThreadMayTakeIt) {
  const FairnessOverride barging(FairnessForTesting::kNever);
  GrantWaiter w1 = GrantWaiter::Exclusive(kAsyncA);
  GrantWaiter r2 = GrantWaiter::Shared(kAsyncB);
  ReleaseToACompetitor({&w1, &r2});
  EXPECT_EQ(owner(), 0);

  // This thread barges in; the competitor then finds the lock taken and marks it for r2 and
  // itself.
  ASSERT_TRUE(lock_.try_lock(self_));
  EXPECT_EQ(state(), kW);
  ASSERT_EQ(lock_.lock_or_enqueue(w1.thread(), w1, nullptr, Deadline::never(), /*woken=*/true),
            Outcome::kPending);
  EXPECT_EQ(state(), kW | kP);
  EXPECT_EQ(queued(), 2u);

  // Now the reader heads the queue, and readers are always granted.
  ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
  ASSERT_TRUE(r2.WaitForWakes(1));
  EXPECT_EQ(r2.tokens(), std::vector<WakeToken>{RwLockWords::kGrantedShared});
  EXPECT_EQ(state(), Readers(1) | kP);
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ASSERT_TRUE(w1.WaitForWakes(2));
  EXPECT_EQ(w1.tokens()[1], RwLockWords::kCompete);
  EXPECT_EQ(queued(), 0u);
  // The competitor takes the free lock with the bit, since others may have queued meanwhile.
  ASSERT_EQ(lock_.lock_or_enqueue(w1.thread(), w1, nullptr, Deadline::never(), /*woken=*/true),
            Outcome::kAcquired);
  EXPECT_EQ(state(), kW | kP);
  ASSERT_EQ(lock_.unlock(kAsyncA), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, ADepartureWhileACompetitorIsOnItsWayLeavesTheWordToNewcomers) {
  // Once a release has freed the lock for a competitor, the parked bit is clear and a newcomer may
  // take the lock at any instant, also in the middle of a grant step. A waiter leaving then must
  // grant nothing: granting the reader behind it on the word it first read would have added a
  // reader to the newcomer's write hold.
  const FairnessOverride barging(FairnessForTesting::kNever);
  GrantWaiter w1 = GrantWaiter::Exclusive(kAsyncA);
  GrantWaiter r2 = GrantWaiter::Shared(kAsyncB);
  GrantWaiter r3 = GrantWaiter::Shared(kAsyncC);
  ReleaseToACompetitor({&w1, &r2, &r3});
  bool barged = false;
  {
    const testing::OnceInNextGrantStep newcomer([&] { barged = lock_.try_lock(self_); });
    ASSERT_TRUE(lock_.cancel(r2));
  }
  EXPECT_TRUE(barged);
  EXPECT_EQ(state(), kW) << "the newcomer's write hold, untouched";
  EXPECT_TRUE(r3.tokens().empty());
  EXPECT_EQ(queued(), 1u);

  // The competitor gives its wake-up up: it marks the held lock, whose release serves r3.
  lock_.abandon_wake(kAsyncA, RwLockWords::kCompete);
  EXPECT_EQ(state(), kW | kP);
  ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
  ASSERT_TRUE(r3.WaitForWakes(1));
  EXPECT_EQ(state(), Readers(1));
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, ACompetitorThatGivesUpAFreeLockServesTheNextWaiter) {
  const FairnessOverride barging(FairnessForTesting::kNever);
  GrantWaiter w1 = GrantWaiter::Exclusive(kAsyncA);
  GrantWaiter r2 = GrantWaiter::Shared(kAsyncB);
  ReleaseToACompetitor({&w1, &r2});
  // Its Promise was cancelled, or its thread stopped, as the wake-up arrived.
  lock_.abandon_wake(kAsyncA, RwLockWords::kCompete);
  ASSERT_TRUE(r2.WaitForWakes(1));
  EXPECT_EQ(r2.tokens(), std::vector<WakeToken>{RwLockWords::kGrantedShared});
  EXPECT_EQ(state(), Readers(1));
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, AFairTurnHandsTheLockToTheWriterAtTheHead) {
  const FairnessOverride fair(FairnessForTesting::kAlways);
  ASSERT_EQ(lock_.lock(self_), LockStatus::kAcquired);
  GrantWaiter w1 = GrantWaiter::Exclusive(kAsyncA);
  ASSERT_EQ(lock_.lock_or_enqueue(w1.thread(), w1), Outcome::kPending);
  ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
  ASSERT_TRUE(w1.WaitForWakes(1));
  EXPECT_EQ(w1.tokens(), std::vector<WakeToken>{RwLockWords::kGrantedExclusive});
  EXPECT_EQ(state(), kW);
  EXPECT_EQ(owner(), kAsyncA);
  EXPECT_FALSE(lock_.try_lock(self_));
  ASSERT_EQ(lock_.unlock(kAsyncA), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, AbandonedGrantsAreHandedOn) {
  const FairnessOverride fair(FairnessForTesting::kAlways);  // every release hands on
  ASSERT_EQ(lock_.lock(self_), LockStatus::kAcquired);
  GrantWaiter w1 = GrantWaiter::Exclusive(kAsyncA);
  GrantWaiter r2 = GrantWaiter::Shared(kAsyncB);
  GrantWaiter w3 = GrantWaiter::Exclusive(kAsyncC);
  for (GrantWaiter* waiter : {&w1, &r2, &w3}) {
    ASSERT_EQ(lock_.lock_or_enqueue(waiter->thread(), *waiter), Outcome::kPending);
  }
  ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
  ASSERT_TRUE(w1.WaitForWakes(1));
  EXPECT_EQ(owner(), kAsyncA);

  // w1 no longer wants its write lock: r2 gets the lock, not nobody.
  lock_.abandon_wake(kAsyncA, w1.tokens()[0]);
  ASSERT_TRUE(r2.WaitForWakes(1));
  EXPECT_EQ(state(), Readers(1) | kP);
  EXPECT_EQ(owner(), 0);

  // r2 gives its read lock up too: w3 gets it.
  lock_.abandon_wake(kAsyncB, r2.tokens()[0]);
  ASSERT_TRUE(w3.WaitForWakes(1));
  EXPECT_EQ(state(), kW);
  EXPECT_EQ(owner(), kAsyncC);
  ASSERT_EQ(lock_.unlock(kAsyncC), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, InterruptedWaitersLeaveNoWaiterBehind) {
  ASSERT_EQ(lock_.lock(self_), LockStatus::kAcquired);
  std::atomic<bool> stop{false};
  const auto stop_requested = [&] { return stop.load(); };
  const Interrupt interrupt{std::chrono::milliseconds(1), stop_requested};
  LockStatus writer = LockStatus::kAcquired;
  LockStatus reader = LockStatus::kAcquired;
  ThreadGroup threads;
  threads.Start([&] {
    writer = with_interrupt(&interrupt,
                            [&] { return lock_.lock(current_thread_id(), Deadline::never()); });
  });
  threads.Start([&] {
    reader = with_interrupt(
        &interrupt, [&] { return lock_.lock_shared(current_thread_id(), Deadline::never()); });
  });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 2; }));
  stop = true;
  threads.JoinOrAbort(testing::kWaitLimit);
  EXPECT_EQ(writer, LockStatus::kInterrupted);
  EXPECT_EQ(reader, LockStatus::kInterrupted);
  EXPECT_EQ(queued(), 0u);
  EXPECT_EQ(state(), kW);
  ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, InterruptedWaiterThatWasGrantedTheLockPassesItOn) {
  // The interrupt is polled while the waiter is queued and answers only after the release has
  // granted it the lock: the grant must reach the next waiter.
  ASSERT_EQ(lock_.lock(self_), LockStatus::kAcquired);
  std::atomic<bool> polling{false};
  std::atomic<bool> released{false};
  const auto requested_after_release = [&] {
    polling = true;
    EXPECT_TRUE(WaitUntil([&] { return released.load(); }));
    return true;
  };
  const Interrupt interrupt{std::chrono::milliseconds(1), requested_after_release};
  LockStatus interrupted = LockStatus::kAcquired;
  LockStatus next = LockStatus::kCorrupt;
  ThreadGroup threads;
  threads.Start([&] {
    interrupted = with_interrupt(
        &interrupt, [&] { return lock_.lock(current_thread_id(), Deadline::never()); });
  });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 1; }));
  threads.Start([&] {
    next = lock_.lock_shared(current_thread_id(), HangGuard());
    if (next == LockStatus::kAcquired) {
      EXPECT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
    }
  });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 2; }));
  ASSERT_TRUE(WaitUntil([&] { return polling.load(); }));

  ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
  EXPECT_EQ(state(), kW | kP) << "granted to the queued writer";
  released = true;
  threads.JoinOrAbort();
  EXPECT_EQ(interrupted, LockStatus::kInterrupted);
  EXPECT_EQ(next, LockStatus::kAcquired) << "the abandoned grant was not passed on";
  ExpectClean();
}

TEST_F(RwLockWordsTest, ReleaseGrantsWhatOtherReadersLeavingMeanwhileMadeGrantable) {
  // A release decides its grants while its own hold is still counted, so the other readers, not
  // being the last, may leave on the fast path before it writes the word: the writer at the head
  // is given the drain beside them, which holds however many of them are left, none included.
  ASSERT_EQ(lock_.lock_upgradable(self_), LockStatus::kAcquired);
  ASSERT_TRUE(lock_.try_lock_shared()) << "another reader beside the upgradable one";
  LockStatus writer = LockStatus::kCorrupt;
  ThreadGroup threads;
  StartQueuedWriter(threads, writer);
  ASSERT_EQ(state(), kU | kP | Readers(2));

  ReleaseUpgradableAsTheOtherReaderLeaves();
  threads.JoinOrAbort();
  EXPECT_EQ(writer, LockStatus::kAcquired) << "the refused writer was granted the lock";
  ExpectClean();
}

TEST_F(RwLockWordsTest, ReleaseGrantsAPromiseWriterWhatOtherReadersLeavingMeanwhileMadeGrantable) {
  // The same race with the writer queued as the binding queues lockAsync(): the grant reaches it.
  ASSERT_EQ(lock_.lock_upgradable(self_), LockStatus::kAcquired);
  ASSERT_TRUE(lock_.try_lock_shared()) << "another reader beside the upgradable one";
  GrantWaiter writer = GrantWaiter::Exclusive(kAsyncA);
  ASSERT_EQ(lock_.lock_or_enqueue(writer.thread(), writer), Outcome::kPending);
  ASSERT_EQ(state(), kU | kP | Readers(2));

  ReleaseUpgradableAsTheOtherReaderLeaves();
  ASSERT_TRUE(writer.WaitForWakes(1)) << "the writer was granted the drain";
  EXPECT_EQ(writer.tokens()[0], RwLockWords::kGrantedDrain);
  EXPECT_EQ(state(), kG) << "the readers are gone: the lock is the draining writer's";
  EXPECT_FALSE(lock_.try_lock(self_));
  EXPECT_FALSE(lock_.try_lock_shared());
  ASSERT_EQ(lock_.drain_or_enqueue(writer.thread(), writer), Outcome::kAcquired);
  EXPECT_EQ(state(), kW);
  EXPECT_EQ(owner(), kAsyncA);
  EXPECT_EQ(lock_.unlock(kAsyncA), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, AWriterGrantedBesideReadersDrainsThemOnItsOwnKey) {
  // A downgrade with a writer at the head: the writer cannot have the lock beside the read hold,
  // so it is granted the drain and waits on the drain key; no reader joins meanwhile, and the
  // last read hold to leave hands it the lock.
  ASSERT_EQ(lock_.lock(self_), LockStatus::kAcquired);
  LockStatus writer = LockStatus::kCorrupt;
  ThreadGroup threads;
  StartQueuedWriter(threads, writer);
  GrantWaiter reader = GrantWaiter::Shared(kAsyncA);
  ASSERT_EQ(lock_.lock_or_enqueue(reader.thread(), reader), Outcome::kPending);

  ASSERT_EQ(lock_.downgrade(self_), UnlockStatus::kUnlocked);
  ASSERT_TRUE(WaitUntil([&] { return draining() == 1; })) << "the writer waits on the drain key";
  EXPECT_EQ(queued(), 1u) << "the reader stays queued behind it";
  EXPECT_EQ(state(), kG | kP | Readers(1));
  EXPECT_FALSE(lock_.try_lock_shared()) << "no reader joins a drain";
  EXPECT_FALSE(lock_.try_lock(kAsyncB));
  EXPECT_TRUE(reader.tokens().empty());

  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  threads.JoinOrAbort();
  EXPECT_EQ(writer, LockStatus::kAcquired);
  ASSERT_TRUE(reader.WaitForWakes(1)) << "the writer's release grants the reader";
  EXPECT_EQ(reader.tokens(), std::vector<WakeToken>{RwLockWords::kGrantedShared});
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, ADrainingWriterThatGivesUpLetsInTheReadersItKeptOut) {
  // Its deadline passes while the read hold stays: the drain ends, and the reader queued behind
  // it joins the read hold in the same step.
  ASSERT_EQ(lock_.lock(self_), LockStatus::kAcquired);
  LockStatus writer = LockStatus::kCorrupt;
  ThreadGroup threads;
  threads.Start([&] { writer = lock_.lock(current_thread_id(), Deadline::after_ms(50)); });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 1; }));
  GrantWaiter reader = GrantWaiter::Shared(kAsyncA);
  ASSERT_EQ(lock_.lock_or_enqueue(reader.thread(), reader), Outcome::kPending);
  ASSERT_EQ(lock_.downgrade(self_), UnlockStatus::kUnlocked);

  threads.JoinOrAbort();
  EXPECT_EQ(writer, LockStatus::kTimedOut);
  ASSERT_TRUE(reader.WaitForWakes(1));
  EXPECT_EQ(reader.tokens(), std::vector<WakeToken>{RwLockWords::kGrantedShared});
  EXPECT_EQ(state(), Readers(2));
  EXPECT_EQ(draining(), 0u);
  EXPECT_EQ(queued(), 0u);
  for (int i = 0; i < 2; ++i) ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, AWriterDrainingReadersItFoundThatGivesUpLetsInTheReadersItKeptOut) {
  // The writer found readers alone and nobody queued, so it drains them without a grant; when it
  // gives up (its deadline, or its thread is stopped) the draining bit must go, and the reader
  // that queued behind it must join the read hold in the same step.
  for (const bool interrupted : {false, true}) {
    SCOPED_TRACE(interrupted);
    ASSERT_TRUE(lock_.try_lock_shared());
    std::atomic<bool> stop{false};
    const auto stop_requested = [&] { return stop.load(); };
    const Interrupt interrupt{std::chrono::milliseconds(1), stop_requested};
    LockStatus writer = LockStatus::kCorrupt;
    ThreadGroup threads;
    threads.Start([&] {
      const Deadline deadline = interrupted ? Deadline::never() : Deadline::after_ms(500);
      writer =
          with_interrupt(&interrupt, [&] { return lock_.lock(current_thread_id(), deadline); });
    });
    ASSERT_TRUE(WaitUntil([&] { return draining() == 1; }));
    GrantWaiter reader = GrantWaiter::Shared(kAsyncA);
    ASSERT_EQ(lock_.lock_or_enqueue(reader.thread(), reader), Outcome::kPending);
    EXPECT_EQ(state(), Readers(1) | kG | kP);
    stop = interrupted;

    threads.JoinOrAbort(testing::kWaitLimit);
    EXPECT_EQ(writer, interrupted ? LockStatus::kInterrupted : LockStatus::kTimedOut);
    ASSERT_TRUE(reader.WaitForWakes(1));
    EXPECT_EQ(reader.tokens(), std::vector<WakeToken>{RwLockWords::kGrantedShared});
    EXPECT_EQ(state(), Readers(2));
    EXPECT_EQ(draining(), 0u);
    for (int i = 0; i < 2; ++i) ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
    ExpectClean();
  }
}

TEST_F(RwLockWordsTest, OneDrainServesAPromiseWriterWhichACancelEnds) {
  using Mode = RwLockWords::Mode;
  for (const bool cancelled : {false, true}) {
    SCOPED_TRACE(cancelled);
    ASSERT_EQ(lock_.lock(self_), LockStatus::kAcquired);
    PromiseLock writer(lock_, Mode::kExclusive, kAsyncA);
    ASSERT_EQ(writer.Start(), Outcome::kPending);
    PromiseLock reader(lock_, Mode::kShared, kAsyncB);
    ASSERT_EQ(reader.Start(), Outcome::kPending);

    ASSERT_EQ(lock_.downgrade(self_), UnlockStatus::kUnlocked);
    ASSERT_EQ(writer.Settle(), Outcome::kPending) << "granted the drain: queued on its key";
    EXPECT_EQ(draining(), 1u);
    EXPECT_EQ(state(), kG | kP | Readers(1));
    if (cancelled) {
      ASSERT_EQ(writer.Cancel(), Outcome::kCancelled);
      ASSERT_EQ(reader.Settle(), Outcome::kAcquired) << "the reader it kept out joins";
      EXPECT_EQ(state(), Readers(2));
      ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
      ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
    } else {
      ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
      ASSERT_EQ(writer.Settle(), Outcome::kAcquired) << "the last reader left";
      EXPECT_EQ(owner(), kAsyncA);
      ASSERT_EQ(lock_.unlock(kAsyncA), UnlockStatus::kUnlocked);
      ASSERT_EQ(reader.Settle(), Outcome::kAcquired);
      ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
    }
    ExpectClean();
    EXPECT_EQ(draining(), 0u);
  }
}

TEST_F(RwLockWordsTest, DowngradesUpgradesAndGivingUpKeepAnExactCountThroughDrains) {
  // Every grant beside readers gives a writer the drain: downgrades, upgradable releases beside
  // readers, and waiters giving up ahead of a writer all make one, and drains give up too.
  constexpr int kIterations = 600;
  std::int64_t writes = 0;  // guarded by the lock under test (exclusively)
  std::atomic<std::int64_t> write_acquisitions{0};
  ThreadGroup threads;
  for (int role = 0; role < 4; ++role) {
    threads.Start([&, role] {
      const ThreadId me = current_thread_id();
      for (int i = 0; i < kIterations; ++i) {
        const Deadline deadline = i % 3 == 0 ? Deadline::after_ms((i % 4) * 0.05) : HangGuard();
        if (role == 2) {
          if (lock_.lock_shared(me, deadline) != LockStatus::kAcquired) continue;
          if (i % 8 == 0) std::this_thread::yield();
          ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
          continue;
        }
        if (role == 3) {
          if (lock_.lock_upgradable(me, deadline) != LockStatus::kAcquired) continue;
          if (i % 2 == 0 && lock_.upgrade(me, deadline) == Outcome::kAcquired) {
            ++writes;
            ++write_acquisitions;
            ASSERT_EQ(lock_.unlock(me), UnlockStatus::kUnlocked);
          } else {
            ASSERT_EQ(lock_.unlock_upgradable(me), UnlockStatus::kUnlocked);
          }
          continue;
        }
        const LockStatus status = lock_.lock(me, deadline);
        if (status != LockStatus::kAcquired) {
          ASSERT_EQ(status, LockStatus::kTimedOut);
          continue;
        }
        ++writes;
        ++write_acquisitions;
        if (role == 0) {
          ASSERT_EQ(lock_.downgrade(me), UnlockStatus::kUnlocked);
          if (i % 8 == 0) std::this_thread::yield();
          ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
        } else {
          ASSERT_EQ(lock_.unlock(me), UnlockStatus::kUnlocked);
        }
      }
    });
  }
  threads.JoinOrAbort();
  EXPECT_EQ(writes, write_acquisitions.load());
  ExpectClean();
  EXPECT_EQ(draining(), 0u);
}

TEST_F(RwLockWordsTest, TimeoutsAndInterruptsRacingReleasesNeverStrandAWaiter) {
  // Readers and writers that give up (deadline or interrupt) while releases grant them the lock
  // must pass every grant on; one swallowed would leave a plain locker asleep for good.
  constexpr int kIterations = 1000;
  enum class Kind { kTimed, kInterruptible, kPlain };
  std::int64_t writes = 0;  // guarded by the lock under test (exclusively)
  std::atomic<std::int64_t> write_acquisitions{0};
  ThreadGroup threads;
  for (const bool writer : {true, false}) {
    for (const Kind kind : {Kind::kTimed, Kind::kInterruptible, Kind::kPlain}) {
      threads.Start([&, writer, kind] {
        const ThreadId me = current_thread_id();
        int polls = 0;
        const auto every_third_poll = [&] { return ++polls % 3 == 0; };
        const Interrupt interrupt{std::chrono::microseconds(20), every_third_poll};
        for (int i = 0; i < kIterations; ++i) {
          const Deadline deadline =
              kind == Kind::kTimed ? Deadline::after_ms((i % 4) * 0.05) : Deadline::never();
          const Interrupt* maybe = kind == Kind::kInterruptible ? &interrupt : nullptr;
          const LockStatus status = with_interrupt(maybe, [&] {
            return writer ? lock_.lock(me, deadline) : lock_.lock_shared(me, deadline);
          });
          if (status != LockStatus::kAcquired) {
            ASSERT_TRUE(status == LockStatus::kTimedOut || status == LockStatus::kInterrupted)
                << static_cast<int>(status);
            continue;
          }
          if (i % 16 == 0) std::this_thread::yield();
          if (writer) {
            ++writes;
            ++write_acquisitions;
            ASSERT_EQ(lock_.unlock(me), UnlockStatus::kUnlocked);
          } else {
            ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
          }
        }
      });
    }
  }
  threads.JoinOrAbort();
  EXPECT_EQ(writes, write_acquisitions.load());
  EXPECT_GE(write_acquisitions.load(), kIterations) << "the plain writer always acquires";
  ExpectClean();
}

TEST_F(RwLockWordsTest, AsyncAndSyncLockersKeepAnExactCount) {
  // Asynchronous lockers run the lock step as the binding does and sometimes give up, while
  // queued, while draining, or as their grant arrives, beside blocking lockers.
  using Mode = RwLockWords::Mode;
  constexpr int kIterations = 1000;
  std::int64_t writes = 0;  // guarded by the lock under test
  std::atomic<std::int64_t> write_acquisitions{0};
  std::atomic<int> read_acquisitions{0};
  std::atomic<int> give_ups{0};

  const auto async_locker = [&](bool writer) {
    const ThreadId me = current_thread_id();
    for (int i = 0; i < kIterations; ++i) {
      RwLockWords::LockStep step(lock_, writer ? Mode::kExclusive : Mode::kShared, me);
      testing::PromiseWait wait(step, me);
      Outcome outcome = wait.Start();
      const bool impatient = i % 3 == 0;
      while (outcome == Outcome::kPending) {
        const std::optional<Outcome> settled = wait.Settle(impatient ? 50us : testing::kWaitLimit);
        if (!settled) break;
        outcome = *settled;
      }
      if (outcome == Outcome::kPending) {
        ASSERT_TRUE(impatient) << "a wake-up was lost";
        ++give_ups;
        ASSERT_EQ(wait.Cancel(), Outcome::kCancelled);
        continue;
      }
      ASSERT_EQ(outcome, Outcome::kAcquired);
      if (writer) {
        ++writes;
        ++write_acquisitions;
        if (i % 8 == 0) std::this_thread::yield();
        ASSERT_EQ(lock_.unlock(me), UnlockStatus::kUnlocked);
      } else {
        ++read_acquisitions;
        if (i % 8 == 0) std::this_thread::yield();
        ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
      }
    }
  };
  const auto sync_locker = [&](bool writer) {
    const ThreadId me = current_thread_id();
    for (int i = 0; i < kIterations; ++i) {
      if (writer) {
        ASSERT_EQ(lock_.lock(me), LockStatus::kAcquired);
        ++writes;
        ++write_acquisitions;
        if (i % 8 == 0) std::this_thread::yield();
        ASSERT_EQ(lock_.unlock(me), UnlockStatus::kUnlocked);
      } else {
        ASSERT_EQ(lock_.lock_shared(me), LockStatus::kAcquired);
        ++read_acquisitions;
        if (i % 8 == 0) std::this_thread::yield();
        ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
      }
    }
  };

  ThreadGroup threads;
  threads.Start([&] { async_locker(true); });
  threads.Start([&] { async_locker(false); });
  threads.Start([&] { sync_locker(true); });
  threads.Start([&] { sync_locker(false); });
  threads.JoinOrAbort();

  EXPECT_EQ(writes, write_acquisitions.load());
  EXPECT_EQ(write_acquisitions.load() + read_acquisitions.load() + give_ups.load(),
            4 * kIterations);
  ExpectClean();
}

// --- Owner death and self-deadlock ---

// Runs `body` on a thread of its own and returns that thread's id once the thread has ended (its
// thread_local identity ends it at exit, as a Node environment's teardown does for a worker).
template <typename Body>
ThreadId RunThreadThatEnds(Body body) {
  ThreadId id = kNoThread;
  std::thread([&] {
    id = current_thread_id();
    body(id);
  }).join();
  return id;
}

// A thread that takes the write lock and ends holding it when End() is called, while the test
// waits (its thread_local identity ends it at exit).
class WriterThatEnds {
 public:
  explicit WriterThatEnds(RwLockWords lock)
      : thread_([this, lock]() mutable {
          const ThreadId me = current_thread_id();
          ASSERT_EQ(lock.lock(me), LockStatus::kAcquired);
          id_ = me;
          EXPECT_TRUE(WaitUntil([&] { return may_end_.load(); }));
        }) {
    EXPECT_TRUE(WaitUntil([&] { return id_.load() != kNoThread; }));
  }
  WriterThatEnds(const WriterThatEnds&) = delete;
  WriterThatEnds& operator=(const WriterThatEnds&) = delete;
  ~WriterThatEnds() {
    if (thread_.joinable()) End();
  }

  ThreadId id() const { return id_.load(); }
  // Ends the thread: with waiters parked, its end recovers the lock for them.
  void End() {
    may_end_ = true;
    thread_.join();
  }

 private:
  std::atomic<ThreadId> id_{kNoThread};
  std::atomic<bool> may_end_{false};
  std::thread thread_;
};

// The try-lock a fast path falls back on: it takes the lock over from an ended writer, and
// otherwise reports that it did not get it, without waiting.
TEST_F(RwLockWordsTest, ATryLockFromEndedTakesOverOnlyFromAWriterThatEnded) {
  ThreadId ended = kNoThread;
  ASSERT_EQ(lock_.lock(self_), LockStatus::kAcquired);
  EXPECT_EQ(lock_.try_lock_from_ended(RwLockWords::Mode::kShared, self_ + 1, &ended),
            Outcome::kTimedOut);
  EXPECT_EQ(ended, kNoThread);
  lock_.unlock(self_);
  const ThreadId dead =
      RunThreadThatEnds([&](ThreadId me) { ASSERT_EQ(lock_.lock(me), LockStatus::kAcquired); });
  ASSERT_EQ(lock_.try_lock_from_ended(RwLockWords::Mode::kShared, self_, &ended),
            Outcome::kOwnerDied);
  EXPECT_EQ(ended, dead);
}

TEST_F(RwLockWordsTest, AWriterThatEndsHoldingTheLockIsTakenOverByTheNextWriter) {
  const ThreadId dead =
      RunThreadThatEnds([&](ThreadId me) { ASSERT_EQ(lock_.lock(me), LockStatus::kAcquired); });
  ASSERT_TRUE(thread_ended(dead));
  EXPECT_EQ(state(), kW) << "still held: never silently freed";
  EXPECT_EQ(owner(), dead);
  EXPECT_FALSE(lock_.try_lock(self_)) << "the fast path does not look at the owner";

  ThreadId ended = kNoThread;
  ASSERT_EQ(lock_.lock(self_, HangGuard(), &ended), LockStatus::kOwnerDied);
  EXPECT_EQ(ended, dead);
  EXPECT_EQ(owner(), self_);
  EXPECT_EQ(state() & kW, kW);
  ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
  ExpectClean();
  ASSERT_EQ(lock_.lock(self_, HangGuard(), &ended), LockStatus::kAcquired)
      << "an ordinary lock again";
  ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);

  // The try form of the binding (a try-lock with timeout 0 whose CAS failed).
  const ThreadId dead_again =
      RunThreadThatEnds([&](ThreadId me) { ASSERT_EQ(lock_.lock(me), LockStatus::kAcquired); });
  ended = kNoThread;
  ASSERT_TRUE(lock_.take_from_ended_owner(RwLockWords::Mode::kExclusive, self_, &ended));
  EXPECT_EQ(ended, dead_again);
  EXPECT_EQ(state(), kW);
  EXPECT_EQ(owner(), self_);
  EXPECT_FALSE(lock_.take_from_ended_owner(RwLockWords::Mode::kExclusive, self_, &ended))
      << "this thread is alive";
  ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, AReaderTakesOverTheWriteLockOfAnEndedWriterAsOneReadHold) {
  const ThreadId dead =
      RunThreadThatEnds([&](ThreadId me) { ASSERT_EQ(lock_.lock(me), LockStatus::kAcquired); });
  ThreadId ended = kNoThread;
  ASSERT_EQ(lock_.lock_shared(self_, HangGuard(), &ended), LockStatus::kOwnerDied);
  EXPECT_EQ(ended, dead);
  EXPECT_EQ(state() & ~kP, Readers(1)) << "the write hold became one read hold";
  EXPECT_EQ(owner(), 0);
  EXPECT_FALSE(lock_.try_lock(self_));
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ExpectClean();

  const ThreadId dead_again =
      RunThreadThatEnds([&](ThreadId me) { ASSERT_EQ(lock_.lock(me), LockStatus::kAcquired); });
  ended = kNoThread;
  ASSERT_TRUE(lock_.take_from_ended_owner(RwLockWords::Mode::kShared, self_, &ended));
  EXPECT_EQ(ended, dead_again);
  EXPECT_EQ(state(), Readers(1));
  EXPECT_EQ(owner(), 0);
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, WaitersParkedBeforeTheWriterEndsAreGrantedTheLockWithTheReport) {
  for (const bool shared : {false, true}) {
    WriterThatEnds holder(lock_);
    const ThreadId dead = holder.id();
    LockStatus status = LockStatus::kCorrupt;
    ThreadId ended = kNoThread;
    ThreadGroup threads;
    threads.Start([&] {
      const ThreadId me = current_thread_id();
      status =
          shared ? lock_.lock_shared(me, HangGuard(), &ended) : lock_.lock(me, HangGuard(), &ended);
      if (status != LockStatus::kOwnerDied) return;
      EXPECT_EQ(shared ? lock_.unlock_shared() : lock_.unlock(me), UnlockStatus::kUnlocked);
    });
    ASSERT_TRUE(WaitUntil([&] { return queued() == 1; }));
    holder.End();
    threads.JoinOrAbort();
    EXPECT_EQ(status, LockStatus::kOwnerDied) << (shared ? "reader" : "writer");
    EXPECT_EQ(ended, dead);
    ExpectClean();
  }
}

TEST_F(RwLockWordsTest, AnAbandonedGrantThatCarriesAnEndedWriterKeepsTheReport) {
  WriterThatEnds holder(lock_);
  const ThreadId dead = holder.id();
  GrantWaiter w1 = GrantWaiter::Exclusive(kAsyncA);
  GrantWaiter w2 = GrantWaiter::Exclusive(kAsyncB);
  for (GrantWaiter* waiter : {&w1, &w2}) {
    ASSERT_EQ(lock_.lock_or_enqueue(waiter->thread(), *waiter), Outcome::kPending);
  }
  holder.End();
  ASSERT_TRUE(w1.WaitForWakes(1));
  EXPECT_EQ(grant_of(w1.tokens()[0]), RwLockWords::kGrantedExclusive);
  EXPECT_EQ(ended_owner_of(w1.tokens()[0]), dead);
  EXPECT_EQ(owner(), kAsyncA);

  // w1 gives its grant away: w2 gets the lock, and the report with it.
  lock_.abandon_wake(kAsyncA, w1.tokens()[0]);
  ASSERT_TRUE(w2.WaitForWakes(1));
  EXPECT_EQ(grant_of(w2.tokens()[0]), RwLockWords::kGrantedExclusive);
  EXPECT_EQ(ended_owner_of(w2.tokens()[0]), dead);
  EXPECT_EQ(owner(), kAsyncB);

  // w2 gives it away with nobody waiting: the lock stays the ended writer's, for the next taker.
  lock_.abandon_wake(kAsyncB, w2.tokens()[0]);
  EXPECT_EQ(state(), kW);
  EXPECT_EQ(owner(), dead);
  ThreadId ended = kNoThread;
  ASSERT_EQ(lock_.lock_shared(self_, HangGuard(), &ended), LockStatus::kOwnerDied);
  EXPECT_EQ(ended, dead);
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, ABlockedLockWhoseOwnAsyncWaitIsGrantedTheWriteLockReportsADeadlock) {
  // Never a fair turn by the timer: a Promise wait whose thread is blocked in the same bucket is
  // handed the lock all the same (it could not compete), and the blocked wait sees it.
  const FairnessOverride barging(FairnessForTesting::kNever);
  // With an interrupt (what the binding always gives), the blocked wait watches the owner word.
  const auto never = [] { return false; };
  const Interrupt interrupt{std::chrono::milliseconds(1), never};
  for (const bool shared : {false, true}) {
    std::atomic<bool> held{false};
    ThreadGroup threads;
    threads.Start([&] {
      const ThreadId me = current_thread_id();
      ASSERT_EQ(lock_.lock(me), LockStatus::kAcquired);
      held = true;
      EXPECT_TRUE(WaitUntil([&] { return queued() == 2; }));
      EXPECT_EQ(lock_.unlock(me), UnlockStatus::kUnlocked);
    });
    ASSERT_TRUE(WaitUntil([&] { return held.load(); }));
    GrantWaiter mine = GrantWaiter::Exclusive(self_);  // this thread's own lockAsync
    ASSERT_EQ(lock_.lock_or_enqueue(mine.thread(), mine), Outcome::kPending);
    const LockStatus status =
        shared ? with_interrupt(&interrupt, [&] { return lock_.lock_shared(self_, HangGuard()); })
               : with_interrupt(&interrupt, [&] { return lock_.lock(self_, HangGuard()); });
    EXPECT_EQ(status, LockStatus::kAlreadyHeld) << (shared ? "lock_shared" : "lock");
    threads.JoinOrAbort();
    ASSERT_TRUE(mine.WaitForWakes(1));
    EXPECT_EQ(mine.tokens()[0], RwLockWords::kGrantedExclusive);
    EXPECT_EQ(owner(), self_);
    EXPECT_EQ(queued(), 0u);
    ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
    ExpectClean();
  }

  // A write lock granted to the blocked waiter itself is what the watch sees too: it is taken.
  std::atomic<bool> held{false};
  ThreadGroup threads;
  threads.Start([&] {
    const ThreadId me = current_thread_id();
    ASSERT_EQ(lock_.lock(me), LockStatus::kAcquired);
    held = true;
    EXPECT_TRUE(WaitUntil([&] { return queued() == 1; }));
    EXPECT_EQ(lock_.unlock(me), UnlockStatus::kUnlocked);
  });
  ASSERT_TRUE(WaitUntil([&] { return held.load(); }));
  EXPECT_EQ(with_interrupt(&interrupt, [&] { return lock_.lock(self_, HangGuard()); }),
            LockStatus::kAcquired);
  threads.JoinOrAbort();
  EXPECT_EQ(owner(), self_);
  ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
  ExpectClean();
}

// --- The upgradable read lock ---

TEST_F(RwLockWordsTest, TheUpgradableHoldIsNamedSharedWithReadersAndHeldByOneThreadAtATime) {
  ASSERT_TRUE(lock_.try_lock_upgradable(self_));
  EXPECT_EQ(state(), kU | Readers(1));
  EXPECT_EQ(owner(), self_);
  EXPECT_EQ(lock_.upgrader(), self_);
  EXPECT_EQ(lock_.writer(), kNoThread);
  EXPECT_TRUE(lock_.try_lock_shared()) << "plain readers join";
  EXPECT_FALSE(lock_.try_lock_upgradable(kAsyncA)) << "one upgradable holder at a time";
  EXPECT_FALSE(lock_.try_lock(kAsyncA));
  EXPECT_EQ(lock_.lock_upgradable(self_), LockStatus::kAlreadyHeld);
  EXPECT_EQ(lock_.lock(self_), LockStatus::kAlreadyHeld) << "it would wait for its own read";

  // Releases that do not match the hold are refused and change nothing.
  EXPECT_EQ(lock_.unlock_upgradable(kAsyncA), UnlockStatus::kNotOwner);
  EXPECT_EQ(lock_.unlock(self_), UnlockStatus::kNotOwner);
  EXPECT_EQ(lock_.downgrade(self_), UnlockStatus::kNotOwner);
  EXPECT_EQ(lock_.upgrade(kAsyncA), Outcome::kNotOwner);
  EXPECT_EQ(state(), kU | Readers(2));
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  EXPECT_EQ(lock_.unlock_shared(), UnlockStatus::kNotOwner) << "the last read hold is upgradable";
  EXPECT_EQ(state(), kU | Readers(1));

  ASSERT_EQ(lock_.upgrade(self_), Outcome::kAcquired) << "alone: one step";
  EXPECT_EQ(state(), kW);
  EXPECT_EQ(owner(), self_);
  EXPECT_EQ(lock_.upgrade(self_), Outcome::kNotOwner);
  ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
  ExpectClean();

  ASSERT_EQ(lock_.lock_upgradable(self_, HangGuard()), LockStatus::kAcquired);
  ASSERT_EQ(lock_.unlock_upgradable(self_), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, AnUpgradeWaitsForTheOtherReadersAndKeepsNewReadersOut) {
  ASSERT_TRUE(lock_.try_lock_shared());
  std::atomic<ThreadId> upgrader{kNoThread};
  Outcome upgraded = Outcome::kCorrupt;
  int written = 0;
  ThreadGroup threads;
  threads.Start([&] {
    const ThreadId me = current_thread_id();
    ASSERT_EQ(lock_.lock_upgradable(me, HangGuard()), LockStatus::kAcquired);
    upgrader = me;
    upgraded = lock_.upgrade(me, HangGuard());
    written = 1;
    ASSERT_EQ(lock_.unlock(me), UnlockStatus::kUnlocked);
  });
  ASSERT_TRUE(WaitUntil([&] { return draining() == 1; }));
  EXPECT_EQ(state(), kU | kG | Readers(2));
  EXPECT_FALSE(lock_.try_lock_shared()) << "no reader joins while the upgrade waits";
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  threads.JoinOrAbort();
  EXPECT_EQ(upgraded, Outcome::kAcquired);
  EXPECT_EQ(written, 1);
  EXPECT_EQ(draining(), 0u);
  ExpectClean();
}

TEST_F(RwLockWordsTest, AnUpgradeComesBeforeAWriterQueuedEarlier) {
  ASSERT_TRUE(lock_.try_lock_shared());
  std::atomic<bool> has_upgradable{false};
  std::vector<int> order;  // guarded by the lock under test
  ThreadGroup threads;
  threads.Start([&] {
    const ThreadId me = current_thread_id();
    ASSERT_EQ(lock_.lock_upgradable(me, HangGuard()), LockStatus::kAcquired);
    has_upgradable = true;
    ASSERT_TRUE(WaitUntil([&] { return queued() == 1; })) << "the writer queues";
    ASSERT_EQ(lock_.upgrade(me, HangGuard()), Outcome::kAcquired);
    order.push_back(1);
    ASSERT_EQ(lock_.unlock(me), UnlockStatus::kUnlocked);
  });
  ASSERT_TRUE(WaitUntil([&] { return has_upgradable.load(); }));
  threads.Start([&] {
    const ThreadId me = current_thread_id();
    ASSERT_EQ(lock_.lock(me, HangGuard()), LockStatus::kAcquired);
    order.push_back(2);
    ASSERT_EQ(lock_.unlock(me), UnlockStatus::kUnlocked);
  });
  ASSERT_TRUE(WaitUntil([&] { return draining() == 1; }));
  EXPECT_EQ(state(), kU | kG | kP | Readers(2));
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  threads.JoinOrAbort();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  ExpectClean();
}

TEST_F(RwLockWordsTest, AnUpgradeThatTimesOutKeepsTheUpgradableHold) {
  ASSERT_TRUE(lock_.try_lock_upgradable(self_));
  ASSERT_TRUE(lock_.try_lock_shared());  // another reader, which stays
  EXPECT_EQ(lock_.upgrade(self_, Deadline::after_ms(5)), Outcome::kTimedOut);
  EXPECT_EQ(state(), kU | Readers(2)) << "no mark left behind";
  EXPECT_EQ(owner(), self_);
  EXPECT_EQ(draining(), 0u);
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ASSERT_EQ(lock_.unlock_upgradable(self_), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, AnInterruptedUpgradeKeepsItsHoldAndLetsInTheReadersItKeptOut) {
  ASSERT_TRUE(lock_.try_lock_shared());
  std::atomic<bool> stop{false};
  std::atomic<bool> late_done{false};
  const auto stop_requested = [&] { return stop.load(); };
  const Interrupt interrupt{std::chrono::milliseconds(1), stop_requested};
  Outcome upgraded = Outcome::kAcquired;
  bool still_upgradable = false;
  LockStatus late = LockStatus::kCorrupt;
  ThreadGroup threads;
  threads.Start([&] {
    const ThreadId me = current_thread_id();
    ASSERT_EQ(lock_.lock_upgradable(me, HangGuard()), LockStatus::kAcquired);
    upgraded = with_interrupt(&interrupt, [&] { return lock_.upgrade(me); });
    still_upgradable = lock_.upgrader() == me;
    ASSERT_TRUE(WaitUntil([&] { return late_done.load(); }));
    ASSERT_EQ(lock_.unlock_upgradable(me), UnlockStatus::kUnlocked);
  });
  ASSERT_TRUE(WaitUntil([&] { return draining() == 1; }));
  threads.Start([&] {
    late = lock_.lock_shared(current_thread_id(), HangGuard());
    ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
    late_done = true;
  });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 1; })) << "the late reader queues behind the mark";
  stop = true;
  threads.JoinOrAbort(testing::kWaitLimit);
  EXPECT_EQ(upgraded, Outcome::kInterrupted);
  EXPECT_TRUE(still_upgradable);
  EXPECT_EQ(late, LockStatus::kAcquired) << "let in when the upgrade gave up";
  EXPECT_EQ(state(), Readers(1));
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, AnAsynchronousUpgradeIsWokenWhenTheLastOtherReaderLeaves) {
  ASSERT_TRUE(lock_.try_lock_upgradable(kAsyncA));
  ASSERT_TRUE(lock_.try_lock_shared());
  ASSERT_TRUE(lock_.try_lock_shared());
  GrantWaiter upgrade = GrantWaiter::Upgrade(kAsyncA);
  ASSERT_EQ(lock_.upgrade_or_enqueue(upgrade.thread(), upgrade), Outcome::kPending);
  EXPECT_EQ(state(), kU | kG | Readers(3));
  GrantWaiter stranger = GrantWaiter::Upgrade(kAsyncB);
  EXPECT_EQ(lock_.upgrade_or_enqueue(stranger.thread(), stranger), Outcome::kNotOwner);

  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  EXPECT_EQ(upgrade.tokens().size(), 0u) << "not alone yet";
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ASSERT_TRUE(upgrade.WaitForWakes(1));
  EXPECT_EQ(upgrade.tokens(), std::vector<WakeToken>{RwLockWords::kReadersLeft});
  ASSERT_EQ(lock_.upgrade_or_enqueue(upgrade.thread(), upgrade), Outcome::kAcquired);
  EXPECT_EQ(state(), kW);
  EXPECT_EQ(owner(), kAsyncA);
  ASSERT_EQ(lock_.unlock(kAsyncA), UnlockStatus::kUnlocked);
  ExpectClean();

  // A cancelled asynchronous upgrade takes its mark away.
  ASSERT_TRUE(lock_.try_lock_upgradable(kAsyncA));
  ASSERT_TRUE(lock_.try_lock_shared());
  GrantWaiter cancelled = GrantWaiter::Upgrade(kAsyncA);
  ASSERT_EQ(lock_.upgrade_or_enqueue(cancelled.thread(), cancelled), Outcome::kPending);
  ASSERT_TRUE(parking_lot::cancel(cancelled));
  lock_.end_drain(kAsyncA);
  EXPECT_EQ(state(), kU | Readers(2));
  EXPECT_TRUE(lock_.try_lock_shared()) << "readers join again";
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ASSERT_EQ(lock_.unlock_upgradable(kAsyncA), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, AReleaseGrantsOneUpgradableReaderAmongTheReadersAtTheHead) {
  ASSERT_EQ(lock_.lock(self_), LockStatus::kAcquired);
  GrantWaiter r1 = GrantWaiter::Shared(kAsyncA);
  GrantWaiter u2 = GrantWaiter::Upgradable(kAsyncB);
  GrantWaiter r3 = GrantWaiter::Shared(kAsyncA);
  GrantWaiter u4 = GrantWaiter::Upgradable(kAsyncC);
  GrantWaiter r5 = GrantWaiter::Shared(kAsyncA);
  for (GrantWaiter* waiter : {&r1, &u2, &r3, &u4, &r5}) {
    ASSERT_EQ(lock_.lock_or_enqueue(waiter->thread(), *waiter), Outcome::kPending);
  }
  ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
  for (GrantWaiter* waiter : {&r1, &u2, &r3}) ASSERT_TRUE(waiter->WaitForWakes(1));
  EXPECT_EQ(u2.tokens(), std::vector<WakeToken>{RwLockWords::kGrantedUpgradable});
  EXPECT_EQ(state(), kU | kP | Readers(3));
  EXPECT_EQ(owner(), kAsyncB) << "a granted upgradable reader gets its owner word set for it";
  EXPECT_EQ(queued(), 2u) << "the second upgradable reader waits, and the reader behind it";

  // Its release, not the last read hold, grants the next upgradable reader and the reader behind.
  ASSERT_EQ(lock_.unlock_upgradable(kAsyncB), UnlockStatus::kUnlocked);
  ASSERT_TRUE(u4.WaitForWakes(1));
  ASSERT_TRUE(r5.WaitForWakes(1));
  EXPECT_EQ(state(), kU | Readers(4));
  EXPECT_EQ(owner(), kAsyncC);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  // An abandoned upgradable grant is released like a read hold.
  lock_.abandon_wake(kAsyncC, RwLockWords::kGrantedUpgradable);
  ExpectClean();
}

TEST_F(RwLockWordsTest, AnUpgradableHoldWhoseThreadEndedIsReleased) {
  // Nobody waits when the holder ends: the next acquirer on the slow path releases the hold.
  const ThreadId dead = RunThreadThatEnds(
      [&](ThreadId me) { ASSERT_EQ(lock_.lock_upgradable(me), LockStatus::kAcquired); });
  EXPECT_EQ(state(), kU | Readers(1));
  EXPECT_EQ(owner(), dead);
  ASSERT_EQ(lock_.lock(self_, HangGuard()), LockStatus::kAcquired) << "a read changed nothing";
  ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
  ExpectClean();

  // A writer parked behind it when it ends is granted the lock by the end of that thread.
  std::atomic<bool> holding{false};
  std::atomic<bool> end{false};
  LockStatus writer = LockStatus::kCorrupt;
  ThreadGroup threads;
  threads.Start([&] {
    RunThreadThatEnds([&](ThreadId me) {
      ASSERT_EQ(lock_.lock_upgradable(me), LockStatus::kAcquired);
      holding = true;
      ASSERT_TRUE(WaitUntil([&] { return end.load(); }));
    });
  });
  ASSERT_TRUE(WaitUntil([&] { return holding.load(); }));
  threads.Start([&] {
    const ThreadId me = current_thread_id();
    writer = lock_.lock(me, HangGuard());
    ASSERT_EQ(lock_.unlock(me), UnlockStatus::kUnlocked);
  });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 1; }));
  end = true;
  threads.JoinOrAbort();
  EXPECT_EQ(writer, LockStatus::kAcquired);
  ExpectClean();
}

TEST_F(RwLockWordsTest, TheNextUpgradableReaderTakesOverAWriteLockWhoseWriterEnded) {
  const ThreadId dead =
      RunThreadThatEnds([&](ThreadId me) { ASSERT_EQ(lock_.lock(me), LockStatus::kAcquired); });
  ThreadId ended = kNoThread;
  ASSERT_EQ(lock_.lock_upgradable(self_, HangGuard(), &ended), LockStatus::kOwnerDied);
  EXPECT_EQ(ended, dead);
  EXPECT_EQ(state() & ~kP, kU | Readers(1));
  EXPECT_EQ(owner(), self_);
  ASSERT_EQ(lock_.upgrade(self_, HangGuard()), Outcome::kAcquired);
  ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, CorruptUpgradableWordsAreReportedNotActedOn) {
  for (const std::int32_t corrupt : {kW | kU, kU, kW | kG, kU | kG}) {
    SCOPED_TRACE(corrupt);
    EXPECT_TRUE(RwLockWords::is_corrupt(corrupt));
    words_[0] = corrupt;
    words_[1] = self_;
    EXPECT_FALSE(lock_.try_lock_shared());
    EXPECT_FALSE(lock_.try_lock_upgradable(kAsyncA));
    EXPECT_EQ(lock_.lock_shared(kAsyncA, HangGuard()), LockStatus::kCorrupt);
    EXPECT_EQ(lock_.lock_upgradable(kAsyncA, HangGuard()), LockStatus::kCorrupt);
    EXPECT_EQ(lock_.unlock_upgradable(self_), UnlockStatus::kCorrupt);
    EXPECT_EQ(lock_.upgrade(self_, HangGuard()), Outcome::kCorrupt);
    EXPECT_EQ(words_[0], corrupt) << "left as found";
  }
  words_[0] = 0;
  words_[1] = 0;
  EXPECT_FALSE(RwLockWords::is_corrupt(kU | kG | Readers(2)));
  EXPECT_FALSE(RwLockWords::is_corrupt(kU | kP | Readers(1)));
  EXPECT_FALSE(RwLockWords::is_corrupt(kG | Readers(1))) << "a writer drains the last reader";
  EXPECT_FALSE(RwLockWords::is_corrupt(kG | kP)) << "the lock is the draining writer's";
}

TEST(RwLockTest, TheUpgradableReadLockOfTheSelfContainedLock) {
  RwLock lock;
  EXPECT_THROW(lock.upgrade(), std::system_error) << "no upgradable read lock held";
  lock.lock_upgradable();
  EXPECT_FALSE(lock.try_lock_upgradable());
  EXPECT_TRUE(lock.try_lock_shared());
  EXPECT_THROW(lock.lock_upgradable(), std::system_error);
  std::thread([&] { EXPECT_FALSE(lock.try_lock()); }).join();
  lock.unlock_shared();
  lock.upgrade();
  std::thread([&] { EXPECT_FALSE(lock.try_lock_shared()); }).join();
  lock.unlock();
  lock.lock_upgradable();
  lock.unlock_upgradable();
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

TEST(RwLockTest, UpgradersWritersAndReadersKeepAnExactCountAndNoWriteComesBetweenAnUpgrade) {
  // Upgraders read under the upgradable lock, then upgrade and write: no other write may land in
  // between. Half of them upgrade through the asynchronous steps, as the binding does.
  constexpr int kIterations = 2000;
  alignas(RwLockWords::kAlign) std::int32_t words[RwLockWords::kWordCount] = {};
  RwLockWords lock(words);
  std::int64_t value = 0;  // guarded by the lock under test
  std::atomic<int> stale{0};
  std::atomic<int> reads{0};
  const auto upgrader = [&](bool async) {
    const ThreadId me = current_thread_id();
    for (int i = 0; i < kIterations; ++i) {
      ASSERT_EQ(lock.lock_upgradable(me, HangGuard()), LockStatus::kAcquired);
      const std::int64_t seen = value;
      if (i % 8 == 0) std::this_thread::yield();
      if (async) {
        GrantWaiter upgrade = GrantWaiter::Upgrade(me);
        for (;;) {
          // Counted before queuing: the wake-up may come before enqueue returns.
          const std::size_t woken = upgrade.tokens().size();
          const Outcome step = lock.upgrade_or_enqueue(upgrade.thread(), upgrade);
          ASSERT_NE(step, Outcome::kCorrupt);
          ASSERT_NE(step, Outcome::kNotOwner);
          if (step == Outcome::kAcquired) break;
          ASSERT_TRUE(upgrade.WaitForWakes(woken + 1));
        }
      } else {
        ASSERT_EQ(lock.upgrade(me, HangGuard()), Outcome::kAcquired);
      }
      if (value != seen) ++stale;
      ++value;
      ASSERT_EQ(lock.unlock(me), UnlockStatus::kUnlocked);
    }
  };
  const auto writer = [&] {
    const ThreadId me = current_thread_id();
    for (int i = 0; i < kIterations; ++i) {
      ASSERT_EQ(lock.lock(me, HangGuard()), LockStatus::kAcquired);
      ++value;
      ASSERT_EQ(lock.unlock(me), UnlockStatus::kUnlocked);
    }
  };
  const auto reader = [&] {
    const ThreadId me = current_thread_id();
    for (int i = 0; i < kIterations; ++i) {
      ASSERT_EQ(lock.lock_shared(me, HangGuard()), LockStatus::kAcquired);
      if (value >= 0) ++reads;
      if (i % 4 == 0) std::this_thread::yield();
      ASSERT_EQ(lock.unlock_shared(), UnlockStatus::kUnlocked);
    }
  };
  ThreadGroup threads;
  threads.Start([&] { upgrader(false); });
  threads.Start([&] { upgrader(true); });
  threads.Start(writer);
  threads.Start(reader);
  threads.Start(reader);
  threads.JoinOrAbort();
  EXPECT_EQ(value, 3 * kIterations);
  EXPECT_EQ(stale.load(), 0);
  EXPECT_EQ(reads.load(), 2 * kIterations);
  EXPECT_EQ(words[0], 0);
  EXPECT_EQ(words[1], 0);
  EXPECT_EQ(parking_lot::queued_count(lock.drain_key()), 0u);
}

// --- Wait steps: one protocol per wait, run as a Promise wait and as a blocking wait ---

// The release of `mode`'s hold by `thread`.
UnlockStatus Release(RwLockWords lock, RwLockWords::Mode mode, ThreadId thread) {
  switch (mode) {
    case RwLockWords::Mode::kShared:
      return lock.unlock_shared();
    case RwLockWords::Mode::kExclusive:
      return lock.unlock(thread);
    case RwLockWords::Mode::kUpgradable:
      break;
  }
  return lock.unlock_upgradable(thread);
}

TEST_F(RwLockWordsTest, OneLockStepPerModeServesAPromiseWaitAndABlockingWait) {
  using Mode = RwLockWords::Mode;
  for (const Mode mode : {Mode::kShared, Mode::kExclusive, Mode::kUpgradable}) {
    SCOPED_TRACE(static_cast<int>(mode));
    ASSERT_EQ(lock_.lock(self_), LockStatus::kAcquired);
    testing::PromiseStep<RwLockWords::LockStep> promise(testing::OnThread{kAsyncA}, lock_, mode,
                                                        kAsyncA);
    ASSERT_EQ(promise.Start(), Outcome::kPending);
    std::atomic<Outcome> blocking{Outcome::kPending};
    std::atomic<bool> may_release{false};
    std::thread blocked([&] {
      const ThreadId me = current_thread_id();
      RwLockWords::LockStep step(lock_, mode, me);
      blocking = wait_blocking(step, HangGuard());
      if (blocking != Outcome::kAcquired) return;
      EXPECT_TRUE(WaitUntil([&] { return may_release.load(); }));
      EXPECT_EQ(Release(lock_, mode, me), UnlockStatus::kUnlocked);
    });
    ASSERT_TRUE(WaitUntil([&] { return queued() == 2; }));
    ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
    ASSERT_EQ(promise.Settle(), Outcome::kAcquired) << "the older waiter is served first";
    if (mode == Mode::kShared) {
      // Readers at the head are granted together.
      EXPECT_TRUE(WaitUntil([&] { return blocking.load() == Outcome::kAcquired; }));
      EXPECT_EQ(state(), Readers(2));
    } else {
      EXPECT_EQ(owner(), kAsyncA);
      EXPECT_EQ(blocking.load(), Outcome::kPending) << "one named holder at a time";
      EXPECT_EQ(queued(), 1u);
    }
    ASSERT_EQ(Release(lock_, mode, kAsyncA), UnlockStatus::kUnlocked);
    may_release = true;
    blocked.join();
    EXPECT_EQ(blocking.load(), Outcome::kAcquired);
    ExpectClean();
  }
}

TEST_F(RwLockWordsTest, ALockStepThatGivesUpLetsTheWaitersBehindItThrough) {
  using Mode = RwLockWords::Mode;
  ASSERT_TRUE(lock_.try_lock_shared());
  // A Promise writer queued behind the reader keeps a later reader out, until it is cancelled.
  PromiseLock writer(lock_, Mode::kExclusive, kAsyncA);
  ASSERT_EQ(writer.Start(), Outcome::kPending);
  PromiseLock reader(lock_, Mode::kShared, kAsyncB);
  ASSERT_EQ(reader.Start(), Outcome::kPending);
  EXPECT_EQ(writer.Cancel(), Outcome::kCancelled);
  ASSERT_EQ(reader.Settle(), Outcome::kAcquired) << "granted beside the reader holding the lock";
  EXPECT_EQ(state(), Readers(2));
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ExpectClean();

  // A blocking writer whose deadline passes leaves the same way, parked bit and all.
  ASSERT_TRUE(lock_.try_lock_shared());
  std::atomic<Outcome> timed_out{Outcome::kPending};
  std::thread blocked([&] {
    RwLockWords::LockStep step(lock_, Mode::kExclusive, current_thread_id());
    timed_out = wait_blocking(step, Deadline::after_ms(20));
  });
  blocked.join();
  EXPECT_EQ(timed_out.load(), Outcome::kTimedOut);
  EXPECT_EQ(state(), Readers(1));
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ExpectClean();

  // A Promise writer cancelled after its grant was on its way passes the lock on.
  ASSERT_EQ(lock_.lock(self_), LockStatus::kAcquired);
  testing::PromiseStep<RwLockWords::LockStep> late(testing::OnThread{kAsyncA}, lock_,
                                                   Mode::kExclusive, kAsyncA);
  ASSERT_EQ(late.Start(), Outcome::kPending);
  std::atomic<Outcome> next{Outcome::kPending};
  std::thread behind([&] {
    const ThreadId me = current_thread_id();
    RwLockWords::LockStep step(lock_, Mode::kExclusive, me);
    next = wait_blocking(step, HangGuard());
    if (next == Outcome::kAcquired) {
      EXPECT_EQ(lock_.unlock(me), UnlockStatus::kUnlocked);
    }
  });
  ASSERT_TRUE(WaitUntil([&] { return queued() == 2; }));
  ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
  ASSERT_TRUE(late.waiter().WaitForWakes(1));
  EXPECT_EQ(late.Cancel(), Outcome::kCancelled);
  behind.join();
  EXPECT_EQ(next.load(), Outcome::kAcquired);
  ExpectClean();
}

TEST_F(RwLockWordsTest, ALockStepReportsTheWriterThatEndedBothWays) {
  for (const bool promise_form : {true, false}) {
    SCOPED_TRACE(promise_form ? "promise" : "blocking");
    WriterThatEnds holder(lock_);
    const ThreadId dead = holder.id();
    RwLockWords::LockStep step(lock_, RwLockWords::Mode::kExclusive, self_);
    if (promise_form) {
      testing::PromiseWait promise(step, self_);
      ASSERT_EQ(promise.Start(), Outcome::kPending);
      holder.End();
      ASSERT_EQ(promise.Settle(), Outcome::kOwnerDied);
    } else {
      holder.End();  // before the wait: the step takes the lock over
      ASSERT_EQ(wait_blocking(step, HangGuard()), Outcome::kOwnerDied);
    }
    EXPECT_EQ(step.ended_owner(), dead);
    EXPECT_EQ(owner(), self_);
    ASSERT_EQ(lock_.unlock(self_), UnlockStatus::kUnlocked);
    ExpectClean();
  }
}

// The Promise upgrade of `thread`'s upgradable read hold.
struct PromiseUpgrade {
  PromiseUpgrade(RwLockWords lock, ThreadId thread) : step(lock, thread), wait(step, thread) {}
  RwLockWords::UpgradeStep step;
  testing::PromiseWait wait;
};

TEST_F(RwLockWordsTest, OneUpgradeStepServesAPromiseWaitAndABlockingWait) {
  // The Promise form: woken when the other reader leaves, it upgrades.
  ASSERT_TRUE(lock_.try_lock_upgradable(kAsyncA));
  ASSERT_TRUE(lock_.try_lock_shared());
  PromiseUpgrade promise(lock_, kAsyncA);
  ASSERT_EQ(promise.wait.Start(), Outcome::kPending);
  EXPECT_EQ(state(), kU | kG | Readers(2));
  EXPECT_FALSE(lock_.try_lock_shared()) << "the mark keeps new readers out";
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ASSERT_EQ(promise.wait.Settle(), Outcome::kAcquired);
  EXPECT_EQ(state(), kW);
  EXPECT_EQ(owner(), kAsyncA);
  ASSERT_EQ(lock_.unlock(kAsyncA), UnlockStatus::kUnlocked);
  ExpectClean();

  // The blocking form of the same step, on another thread.
  ASSERT_TRUE(lock_.try_lock_shared());
  std::atomic<Outcome> upgraded{Outcome::kPending};
  std::thread upgrader([&] {
    const ThreadId me = current_thread_id();
    ASSERT_EQ(lock_.lock_upgradable(me, HangGuard()), LockStatus::kAcquired);
    RwLockWords::UpgradeStep step(lock_, me);
    upgraded = wait_blocking(step, HangGuard());
    if (upgraded == Outcome::kAcquired) {
      EXPECT_EQ(lock_.unlock(me), UnlockStatus::kUnlocked);
    }
  });
  ASSERT_TRUE(WaitUntil([&] { return draining() == 1; }));
  EXPECT_EQ(upgraded.load(), Outcome::kPending);
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  upgrader.join();
  EXPECT_EQ(upgraded.load(), Outcome::kAcquired);
  ExpectClean();

  // Refused both ways to a thread that does not hold the upgradable read lock.
  ASSERT_TRUE(lock_.try_lock_upgradable(kAsyncA));
  PromiseUpgrade stranger(lock_, kAsyncB);
  EXPECT_EQ(stranger.wait.Start(), Outcome::kNotOwner);
  RwLockWords::UpgradeStep blocking_stranger(lock_, self_);
  EXPECT_EQ(wait_blocking(blocking_stranger, HangGuard()), Outcome::kNotOwner);
  ASSERT_EQ(lock_.unlock_upgradable(kAsyncA), UnlockStatus::kUnlocked);
  ExpectClean();
}

TEST_F(RwLockWordsTest, AnUpgradeStepThatGivesUpTakesItsMarkAway) {
  // A cancelled Promise upgrade keeps its hold and lets in the reader the mark kept out.
  ASSERT_TRUE(lock_.try_lock_upgradable(kAsyncA));
  ASSERT_TRUE(lock_.try_lock_shared());
  PromiseUpgrade promise(lock_, kAsyncA);
  ASSERT_EQ(promise.wait.Start(), Outcome::kPending);
  testing::PromiseStep<RwLockWords::LockStep> reader(testing::OnThread{kAsyncB}, lock_,
                                                     RwLockWords::Mode::kShared, kAsyncB);
  ASSERT_EQ(reader.Start(), Outcome::kPending) << "kept out by the mark";
  EXPECT_EQ(promise.wait.Cancel(), Outcome::kCancelled);
  ASSERT_EQ(reader.Settle(), Outcome::kAcquired);
  EXPECT_EQ(state(), kU | Readers(3));
  EXPECT_EQ(owner(), kAsyncA);
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);

  // A blocking upgrade is refused while this hold's Promise upgrade is under way.
  PromiseUpgrade again(lock_, kAsyncA);
  ASSERT_TRUE(lock_.try_lock_shared());
  ASSERT_EQ(again.wait.Start(), Outcome::kPending);
  std::atomic<Outcome> refused{Outcome::kPending};
  std::thread other([&] {
    // As kAsyncA's blocking form would be asked (the upgrader's identity, not the thread's).
    RwLockWords::UpgradeStep step(lock_, kAsyncA);
    refused = wait_blocking(step, HangGuard());
  });
  other.join();
  EXPECT_EQ(refused.load(), Outcome::kNotOwner);
  EXPECT_EQ(again.wait.Cancel(), Outcome::kCancelled);
  EXPECT_EQ(state(), kU | Readers(2));
  ASSERT_EQ(lock_.unlock_shared(), UnlockStatus::kUnlocked);
  ASSERT_EQ(lock_.unlock_upgradable(kAsyncA), UnlockStatus::kUnlocked);
  ExpectClean();
}

}  // namespace
}  // namespace parklock
