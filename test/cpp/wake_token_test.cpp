// Every primitive's wake-up tokens lie in a range of its own, below the bits that carry an ended
// owner: a token delivered to the wrong kind of waiter can never read as a grant.
#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

#include "lot/owner_death.h"
#include "primitives/condition.h"
#include "primitives/futex.h"
#include "primitives/mutex.h"
#include "primitives/once.h"
#include "primitives/rwlock.h"
#include "primitives/semaphore.h"

namespace parklock {
namespace {

TEST(WakeTokenTest, NoTwoPrimitivesShareATokenRange) {
  const std::vector<std::pair<const char*, std::vector<WakeToken>>> tokens = {
      {"mutex", {MutexWord::kReleased, MutexWord::kReleasedWithMoreWaiters, MutexWord::kHandedOff}},
      {"condition", {ConditionWord::kNotified}},
      {"rwlock",
       {RwLockWords::kGrantedShared, RwLockWords::kGrantedExclusive,
        RwLockWords::kGrantedUpgradable, RwLockWords::kReadersLeft, RwLockWords::kGrantedDrain,
        RwLockWords::kLookAgain}},
      {"semaphore", {SemaphoreWord::kGranted, SemaphoreWord::kCompete}},
      {"futex", {futex::kNotified}},
      {"once", {OnceWord::kFinished, OnceWord::kHandedOff}},
  };
  std::set<WakeToken> ranges;
  for (const auto& [name, values] : tokens) {
    const WakeToken range = values.front() / kTokenSpaceSize;
    EXPECT_NE(range, 0) << name << ": range 0 holds the token of no wake-up";
    EXPECT_TRUE(ranges.insert(range).second) << name << " shares a token range";
    for (const WakeToken token : values) {
      EXPECT_EQ(token / kTokenSpaceSize, range) << name;
      EXPECT_EQ(grant_of(token), token) << name << ": collides with the ended-owner bits";
    }
  }
}

}  // namespace
}  // namespace parklock
