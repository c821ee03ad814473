// The registration ledger of a region, with the identities of real threads: the entries of an
// identity that ended are taken, and their counts forgotten, exactly once, whatever its owner
// does after; a living identity's never are; a full ledger refuses until ended entries are taken.
// The Condition that keeps it is tested in cross_process_test.cpp and shared_region.test.js.
// Native x86-64 Linux only, as shared_region_test.cpp.
#include "across_processes/registration_ledger.h"

#include <gtest/gtest.h>

#if (defined(__linux__) && defined(__x86_64__)) || defined(_WIN32)
#include <cstdint>
#include <map>

#include "temporary_region.h"
#include "test_support.h"

namespace parklock {
namespace {

using registration_ledger::Registrations;
using registration_ledger::Scope;
using testing::RunOnEndingThread;
using testing::TemporaryRegion;

// What take_ended() forgot, by word.
struct Forgotten {
  std::map<std::int32_t*, std::int32_t> counts;
  void take_ended(const std::int32_t* word, Scope scope, std::int32_t counted = 0) {
    auto forget = [this](std::int32_t* at, std::int32_t count) { counts[at] += count; };
    registration_ledger::take_ended(word, scope, counted, forget);
  }
};

ThreadId identity_of_this_thread(const std::int32_t* word) {
  return shared_region::identity_at(word, current_thread_id());
}

// The identity in the region of `word` of a thread that has ended since.
ThreadId ended_identity(const std::int32_t* word) {
  ThreadId identity = kNoThread;
  RunOnEndingThread([&] { identity = identity_of_this_thread(word); });
  return identity;
}

TEST(RegistrationLedgerTest, TheEntriesOfAnIdentityThatEndedAreTakenOnceAndALivingOnesNever) {
  TemporaryRegion region;
  ASSERT_NE(region.opened.region, nullptr);
  std::int32_t* word = region.opened.words;
  std::int32_t* other = region.opened.words + 1;
  const ThreadId ended = ended_identity(word);
  Registrations theirs(word, ended);
  Registrations theirs_elsewhere(other, ended);
  Registrations mine(word, identity_of_this_thread(word));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(theirs.add());
  ASSERT_TRUE(theirs_elsewhere.add());
  ASSERT_TRUE(mine.add());

  Forgotten forgotten;
  forgotten.take_ended(word, Scope::kThisWord);
  EXPECT_EQ(forgotten.counts, (std::map<std::int32_t*, std::int32_t>{{word, 3}}));
  // Taken whole: a departure of their owner finds nothing to take (and so leaves the word alone),
  // and another look forgets nothing more.
  EXPECT_FALSE(theirs.take_one());
  forgotten.take_ended(word, Scope::kThisWord);
  EXPECT_EQ(forgotten.counts, (std::map<std::int32_t*, std::int32_t>{{word, 3}}));
  // The entry on the other word waits for a look at every word; the living identity's stays.
  forgotten.take_ended(word, Scope::kEveryWord);
  EXPECT_EQ(forgotten.counts, (std::map<std::int32_t*, std::int32_t>{{word, 3}, {other, 1}}));
  EXPECT_TRUE(mine.take_one());
  mine.release();
  EXPECT_FALSE(mine.take_one());
}

TEST(RegistrationLedgerTest, AnEntryTakenBetweenItsOwnersStepsIsNotPutBack) {
  TemporaryRegion region;
  ASSERT_NE(region.opened.region, nullptr);
  std::int32_t* word = region.opened.words;
  Registrations theirs(word, ended_identity(word));
  ASSERT_TRUE(theirs.add());
  ASSERT_TRUE(theirs.add());
  // One registration on its way out: the reclaimer forgets only the other.
  ASSERT_TRUE(theirs.take_one());
  Forgotten forgotten;
  forgotten.take_ended(word, Scope::kThisWord);
  EXPECT_EQ(forgotten.counts[word], 1);
  EXPECT_FALSE(theirs.put_back());
  theirs.release();
  // The last one on its way out leaves an empty entry, taken without forgetting anything.
  ASSERT_TRUE(theirs.add());
  ASSERT_TRUE(theirs.take_one());
  forgotten.take_ended(word, Scope::kThisWord);
  EXPECT_EQ(forgotten.counts[word], 1);
  EXPECT_FALSE(theirs.put_back());
}

TEST(RegistrationLedgerTest, AnIdentityWithMoreRegistrationsThanAnEntryCountsTakesMoreEntries) {
  TemporaryRegion region;
  ASSERT_NE(region.opened.region, nullptr);
  std::int32_t* word = region.opened.words;
  constexpr int kMany = static_cast<int>(registration_ledger::kMostCount) + 100;
  Registrations mine(word, identity_of_this_thread(word));
  Registrations theirs(word, ended_identity(word));
  for (int i = 0; i < kMany; ++i) {
    ASSERT_TRUE(mine.add());
    ASSERT_TRUE(theirs.add());
  }
  Forgotten forgotten;
  forgotten.take_ended(word, Scope::kThisWord);
  EXPECT_EQ(forgotten.counts[word], kMany);
  for (int i = 0; i < kMany; ++i) {
    ASSERT_TRUE(mine.take_one()) << i;
    mine.release();
  }
  EXPECT_FALSE(mine.take_one());
}

TEST(RegistrationLedgerTest, AFullLedgerRefusesUntilTheEntriesOfEndedIdentitiesAreTaken) {
  constexpr std::size_t kEntries = shared_region::kLedgerEntries;
  TemporaryRegion region((kEntries + 1) * 4);
  ASSERT_NE(region.opened.region, nullptr);
  std::int32_t* words = region.opened.words;
  const ThreadId ended = ended_identity(words);
  for (std::size_t i = 0; i < kEntries; ++i)
    ASSERT_TRUE(Registrations(words + i, ended).add()) << i;
  Registrations mine(words + kEntries, identity_of_this_thread(words));
  EXPECT_FALSE(mine.add());
  Forgotten forgotten;
  forgotten.take_ended(words + kEntries, Scope::kEveryWord);
  EXPECT_EQ(forgotten.counts.size(), kEntries);
  EXPECT_EQ(forgotten.counts[words + kEntries - 1], 1);
  EXPECT_TRUE(mine.add());
}

TEST(RegistrationLedgerTest, ALookAtHomeGoesFurtherOnlyWhenTheHomeWindowAccountsForTooFew) {
  TemporaryRegion region;
  ASSERT_NE(region.opened.region, nullptr);
  std::int32_t* word = region.opened.words;
  // One more identity than the word's home window has entries: the last one's lies elsewhere.
  constexpr std::int32_t kIdentities = registration_ledger::kHomeWindow + 1;
  for (std::int32_t i = 0; i < kIdentities; ++i) {
    ASSERT_TRUE(Registrations(word, ended_identity(word)).add());
  }
  Forgotten forgotten;
  forgotten.take_ended(word, Scope::kThisWordAtHome, /*counted=*/kIdentities - 1);
  EXPECT_EQ(forgotten.counts[word], kIdentities - 1);
  forgotten.take_ended(word, Scope::kThisWordAtHome, /*counted=*/1);
  EXPECT_EQ(forgotten.counts[word], kIdentities);
}

}  // namespace
}  // namespace parklock

#endif
