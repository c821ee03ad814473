// Regions other processes share, within one process: the files refused, and identities that name
// a thread in the region until it ends. Waits across processes are tested with real processes in
// test/shared_region.test.js (a fork() without exec shares its parent's identities, so it cannot
// stand for another process here). Native x86-64 Linux only: the emulated targets lack some of
// the system calls (open-file-description locks).
#include "shared_region.h"

#include <gtest/gtest.h>

#if defined(__linux__) && defined(__x86_64__)
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

#include "temporary_region.h"
#include "test_support.h"
#include "thread_id.h"

namespace parklock {
namespace {

using testing::RunOnEndingThread;
using testing::TemporaryRegion;

TEST(SharedRegionTest, RefusesAFileThatIsNotARegion) {
  char name[] = "/tmp/parklock-region-test-XXXXXX";
  const int fd = mkstemp(name);
  ASSERT_EQ(write(fd, "garbage", 7), 7);
  const shared_region::Opened opened = shared_region::adopt(fd, /*created=*/false, 0);
  close(fd);
  unlink(name);
  EXPECT_EQ(opened.region, nullptr);
  EXPECT_EQ(opened.error, shared_region::OpenError::kNotARegion);
}

TEST(SharedRegionTest, EachThreadHasItsOwnIdentityThereUntilItEnds) {
  TemporaryRegion region;
  ASSERT_NE(region.opened.region, nullptr);
  const std::int32_t* word = region.opened.words;
  const ThreadId mine = shared_region::identity_at(word, current_thread_id());
  EXPECT_TRUE(shared_region::is_region_identity(mine));
  EXPECT_EQ(shared_region::identity_at(word, current_thread_id()), mine);
  EXPECT_FALSE(shared_region::owner_ended(word, mine));
  EXPECT_EQ(shared_region::describe(word, mine).pid, getpid());

  ThreadId theirs = kNoThread;
  RunOnEndingThread([&] { theirs = shared_region::identity_at(word, current_thread_id()); });
  EXPECT_NE(theirs, mine);
  EXPECT_TRUE(shared_region::owner_ended(word, theirs));
  // Outside every region a thread is itself.
  int elsewhere = 0;
  EXPECT_EQ(shared_region::identity_at(&elsewhere, current_thread_id()), current_thread_id());
}

}  // namespace
}  // namespace parklock

#endif
