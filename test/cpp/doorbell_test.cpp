// across_processes/doorbell.h: what a relay learns from the doorbell between two readings, and
// its sleepers (their entries, woken by a ring or an announcement by the OS's own wake-up: the
// signal word's futex on Linux, a named event on Windows), in one process (relays asleep on it
// are tested with waits in cross_process_test.cpp, when PARKLOCK_CROSS_PROCESS=portable, and on
// Windows). Native x86-64 Linux and Windows, where regions are.
#include "across_processes/doorbell.h"

#include <gtest/gtest.h>

#if (defined(__linux__) && defined(__x86_64__)) || defined(_WIN32)
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "lot/atomic_ref.h"
#include "os/process_start.h"
#include "sleeping_child.h"
#include "temporary_region.h"
#include "test_support.h"

namespace parklock {
namespace {

using testing::kHangGuardMs;
using testing::SleepingChild;
using testing::TemporaryRegion;
using testing::WaitUntil;

class DoorbellTest : public ::testing::Test {
 protected:
  std::uint32_t now() const {
    return atomic_ref<std::uint32_t>(*doorbell_.rings).load(std::memory_order_acquire);
  }
  std::vector<std::uint32_t> words(const cross_process::Rung& rung) const {
    return {rung.words, rung.words + rung.count};
  }

  // The sleepers' table: entry i's key, start and signal.
  atomic_ref<std::uint64_t> key(std::size_t i) const {
    return atomic_ref<std::uint64_t>(
        *reinterpret_cast<std::uint64_t*>(doorbell_.sleepers + i * shared_region::kSleeperBytes));
  }
  atomic_ref<std::uint64_t> start(std::size_t i) const {
    return atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(
        doorbell_.sleepers + i * shared_region::kSleeperBytes + 8));
  }
  atomic_ref<std::uint32_t> signal(std::size_t i) const {
    return atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(
        doorbell_.sleepers + i * shared_region::kSleeperBytes + 16));
  }
  atomic_ref<std::uint32_t> entries_taken() const {
    return atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(doorbell_.sleepers));
  }
  // Entries whose key names this process.
  std::vector<std::size_t> own_entries() const {
    std::vector<std::size_t> own;
    for (std::size_t i = 1; i < shared_region::kSleeperEntries; ++i) {
      if ((key(i).load() >> 32) == static_cast<std::uint32_t>(os::current_pid())) own.push_back(i);
    }
    return own;
  }

  // A sleeper on a thread of its own, asleep for up to a minute: woken by what `wake` does
  // once it is asleep (on its entry), or, where it has none, once it has started. True when it
  // woke before the hang guard, long before its own timeout.
  template <typename Wake>
  bool woken_by(cross_process::DoorbellSleeper& sleeper, bool has_entry, Wake&& wake) {
    std::atomic<bool> woke{false};
    std::atomic<bool> started{false};
    std::thread sleeping([&] {
      const std::uint32_t seen = now();
      started = true;
      sleeper.sleep(doorbell_, seen, std::chrono::minutes(1));
      woke = true;
    });
    const bool asleep = WaitUntil([&] {
      if (!started) return false;
      if (!has_entry) return true;
      const std::vector<std::size_t> own = own_entries();
      return own.size() == 1 && signal(own[0]).load() == os::kSleeperAsleep;
    });
    wake();
    const bool woken =
        asleep && WaitUntil([&] { return woke.load(); },
                            std::chrono::milliseconds(static_cast<int>(kHangGuardMs)));
    sleeping.join();
    return woken;
  }

  TemporaryRegion region_{64};
  std::int32_t* words_ = region_.opened.words;
  shared_region::DoorbellPlace doorbell_ = shared_region::doorbell_place(words_);
};

TEST_F(DoorbellTest, LiesInTheHeaderOfTheRegionOfItsWords) {
  ASSERT_NE(doorbell_.rings, nullptr);
  EXPECT_EQ(shared_region::doorbell_place(words_ + 15).rings, doorbell_.rings);
  EXPECT_EQ(doorbell_.user, reinterpret_cast<const std::uint8_t*>(words_));
  int outside = 0;
  EXPECT_EQ(shared_region::doorbell_place(&outside).rings, nullptr);
}

TEST_F(DoorbellTest, RingsNameTheirWordsInOrder) {
  const std::uint32_t from = now();
  cross_process::ring(doorbell_, words_ + 3);
  cross_process::ring(doorbell_, words_ + 1);
  const cross_process::Rung rung = cross_process::rung_between(doorbell_, from, now());
  EXPECT_FALSE(rung.every);
  EXPECT_EQ(words(rung), (std::vector<std::uint32_t>{3, 1}));
  // Nothing rang since.
  const cross_process::Rung none = cross_process::rung_between(doorbell_, now(), now());
  EXPECT_FALSE(none.every);
  EXPECT_EQ(none.count, 0u);
}

TEST_F(DoorbellTest, MoreRingsThanItKeepsTellNothingButEvery) {
  const std::uint32_t from = now();
  for (std::size_t i = 0; i <= shared_region::kRecentRings; ++i) {
    cross_process::ring(doorbell_, words_ + i);
  }
  EXPECT_TRUE(cross_process::rung_between(doorbell_, from, now()).every);
  // The latest ones alone are still told apart.
  const std::uint32_t later = now() - shared_region::kRecentRings;
  EXPECT_EQ(cross_process::rung_between(doorbell_, later, now()).count,
            shared_region::kRecentRings);
}

TEST_F(DoorbellTest, ARingCountedButNotYetNotedTellsEvery) {
  // A ringer between its two stores, or killed there.
  const std::uint32_t from = now();
  atomic_ref<std::uint32_t>(*doorbell_.rings).fetch_add(1, std::memory_order_acq_rel);
  EXPECT_TRUE(cross_process::rung_between(doorbell_, from, now()).every);
}

TEST_F(DoorbellTest, AnnouncementsWakeButNameNoWordAndKeepTheRingsApart) {
  const std::uint32_t from = now();
  cross_process::ring(doorbell_, words_ + 2);
  for (int i = 0; i < 1000; ++i) cross_process::announce(doorbell_);
  EXPECT_NE(now(), from + 1);
  const cross_process::Rung rung = cross_process::rung_between(doorbell_, from, now());
  EXPECT_FALSE(rung.every);
  EXPECT_EQ(words(rung), (std::vector<std::uint32_t>{2}));
}

TEST_F(DoorbellTest, TheCountOfRingsWraps) {
  atomic_ref<std::uint32_t>(*doorbell_.rings)
      .store(cross_process::kRingMask - 1, std::memory_order_release);
  const std::uint32_t from = now();
  cross_process::ring(doorbell_, words_ + 5);
  cross_process::ring(doorbell_, words_ + 6);
  cross_process::ring(doorbell_, words_ + 7);
  EXPECT_EQ(now() & cross_process::kRingMask, 1u);
  const cross_process::Rung rung = cross_process::rung_between(doorbell_, from, now());
  EXPECT_FALSE(rung.every);
  EXPECT_EQ(words(rung), (std::vector<std::uint32_t>{5, 6, 7}));
}

TEST_F(DoorbellTest, ARingWakesASleeperAsleepInItsEntryAndItsEntryIsFreeOnceItLeaves) {
  cross_process::DoorbellSleeper sleeper;
  EXPECT_TRUE(woken_by(sleeper, true, [&] { cross_process::ring(doorbell_, words_ + 1); }));
  EXPECT_EQ(own_entries().size(), 1u);
  // Asleep again, in the same entry: an announcement wakes it too.
  EXPECT_TRUE(woken_by(sleeper, true, [&] { cross_process::announce(doorbell_); }));
  const std::vector<std::size_t> own = own_entries();
  ASSERT_EQ(own.size(), 1u);
  sleeper.leave();
  EXPECT_EQ(key(own[0]).load(), 0u);
  EXPECT_TRUE(own_entries().empty());
}

TEST_F(DoorbellTest, ARingBeforeTheSleepIsNotSleptThrough) {
  cross_process::DoorbellSleeper sleeper;
  const std::uint32_t seen = now();
  cross_process::ring(doorbell_, words_);
  const auto before = std::chrono::steady_clock::now();
  sleeper.sleep(doorbell_, seen, std::chrono::minutes(1));
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(20));
  sleeper.leave();
}

TEST_F(DoorbellTest, ATableFullOfTheDeadGivesANewcomerADeadOnesEntry) {
  SleepingChild ended;
  const std::uint64_t dead_start = os::process_start(ended.pid());
  ended.kill();
  ended.reap();
  const std::uint64_t dead_key = (std::uint64_t{static_cast<std::uint32_t>(ended.pid())} << 32) | 1;
  for (std::size_t i = 1; i < shared_region::kSleeperEntries; ++i) {
    key(i).store(dead_key);
    start(i).store(dead_start);
    signal(i).store(os::kSleeperAsleep);
  }
  entries_taken().store(shared_region::kSleeperEntries);
  cross_process::DoorbellSleeper sleeper;
  EXPECT_TRUE(woken_by(sleeper, true, [&] { cross_process::ring(doorbell_, words_); }));
  EXPECT_EQ(own_entries().size(), 1u);
  sleeper.leave();
}

TEST_F(DoorbellTest, ATableFullOfTheLivingLeavesANewcomerLookingEveryMillisecond) {
  const std::uint64_t alive_key =
      (std::uint64_t{static_cast<std::uint32_t>(os::current_pid())} << 32) | 0xffffffffu;
  for (std::size_t i = 1; i < shared_region::kSleeperEntries; ++i) key(i).store(alive_key);
  entries_taken().store(shared_region::kSleeperEntries);
  cross_process::DoorbellSleeper sleeper;
  EXPECT_TRUE(woken_by(sleeper, false, [&] { cross_process::ring(doorbell_, words_); }));
  for (std::size_t i = 1; i < shared_region::kSleeperEntries; ++i) key(i).store(0);
  sleeper.leave();
}

}  // namespace
}  // namespace parklock

#endif
