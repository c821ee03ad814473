// across_processes/doorbell.h: what a relay learns from the doorbell between two readings, in
// one process (the relay asleep on it is tested with waits, in cross_process_test.cpp, when
// PARKLOCK_CROSS_PROCESS=portable). Native x86-64 Linux, where regions are.
#include "across_processes/doorbell.h"

#include <gtest/gtest.h>

#if defined(__linux__) && defined(__x86_64__)
#include <vector>

#include "lot/atomic_ref.h"
#include "temporary_region.h"

namespace parklock {
namespace {

using testing::TemporaryRegion;

class DoorbellTest : public ::testing::Test {
 protected:
  std::uint32_t now() const {
    return atomic_ref<std::uint32_t>(*doorbell_.rings).load(std::memory_order_acquire);
  }
  std::vector<std::uint32_t> words(const cross_process::Rung& rung) const {
    return {rung.words, rung.words + rung.count};
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

}  // namespace
}  // namespace parklock

#endif
