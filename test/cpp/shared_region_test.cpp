// Regions other processes share, within one process: the files refused, creation and repair,
// uses and release, a truncated file noticed, and identities that name a thread in the region
// until it ends. Waits across processes are tested with real processes in
// test/shared_region.test.js (a fork() without exec shares its parent's identities, so it cannot
// stand for another process here). Native x86-64 Linux only: the emulated targets lack some of
// the system calls (open-file-description locks).
#include "across_processes/shared_region.h"

#include <gtest/gtest.h>

#if defined(__linux__) && defined(__x86_64__)
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "across_processes/mechanism.h"
#include "lot/thread_id.h"
#include "temporary_region.h"
#include "test_support.h"

namespace parklock {
namespace {

using testing::IdentityElsewhere;
using testing::RunOnEndingThread;
using testing::TemporaryRegion;

TEST(SharedRegionTest, RefusesAFileThatIsNotARegion) {
  char name[] = "/tmp/parklock-region-test-XXXXXX";
  const int fd = mkstemp(name);
  ASSERT_EQ(write(fd, "garbage", 7), 7);
  const shared_region::Opened opened = shared_region::adopt(fd, /*may_repair=*/true, 0);
  close(fd);
  unlink(name);
  EXPECT_EQ(opened.region, nullptr);
  EXPECT_EQ(opened.error, shared_region::OpenError::kNotARegion);
}

// An empty file at a fresh path, removed at the end of the test.
struct EmptyFile {
  std::string path;
  EmptyFile() {
    char name[] = "/tmp/parklock-region-test-XXXXXX";
    close(mkstemp(name));
    path = name;
  }
  ~EmptyFile() { unlink(path.c_str()); }
  int open_it() const { return open(path.c_str(), O_RDWR | O_CLOEXEC); }
};

std::size_t mapped_now() {
  return shared_region::detail::mapped_count.load();
}

TEST(SharedRegionTest, CreatesOnlyWhereNothingIsAndSharesOneMappingPerFile) {
  EmptyFile taken;
  EXPECT_EQ(shared_region::create(taken.path.c_str(), 0600, 64).error,
            shared_region::OpenError::kExists);
  const std::string path = taken.path + ".region";
  const std::size_t before = mapped_now();
  const shared_region::Opened made = shared_region::create(path.c_str(), 0600, 64);
  ASSERT_NE(made.region, nullptr);
  EXPECT_TRUE(made.created);
  struct stat info {};
  ASSERT_EQ(stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_size, static_cast<off_t>(shared_region::kHeaderBytes + 64));
  EXPECT_EQ(shared_region::create(path.c_str(), 0600, 64).error, shared_region::OpenError::kExists);

  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  const shared_region::Opened again = shared_region::adopt(fd, /*may_repair=*/true, 0);
  close(fd);
  EXPECT_EQ(again.region, made.region);
  EXPECT_FALSE(again.created);
  EXPECT_EQ(mapped_now(), before + 1);
  EXPECT_EQ(shared_region::region_at(made.words), made.region);

  // Mapped while either use lasts.
  shared_region::release(again.region);
  EXPECT_EQ(shared_region::region_at(made.words), made.region);
  shared_region::release(made.region);
  EXPECT_EQ(mapped_now(), before);
  EXPECT_EQ(shared_region::region_at(made.words), nullptr);
  unlink(path.c_str());
}

TEST(SharedRegionTest, RepairsAnUnfinishedFileOnlyWhereAllowed) {
  EmptyFile empty;
  const int fd = empty.open_it();
  EXPECT_EQ(shared_region::adopt(fd, /*may_repair=*/false, 0).error,
            shared_region::OpenError::kUnfinished);
  const shared_region::Opened repaired = shared_region::adopt(fd, /*may_repair=*/true, 128);
  close(fd);
  ASSERT_NE(repaired.region, nullptr);
  EXPECT_TRUE(repaired.created);
  EXPECT_EQ(repaired.size, 128u);
  EXPECT_TRUE(shared_region::intact(repaired.region));
  shared_region::release(repaired.region);
}

// The init lock, held through another open file description, as another process's repairer holds
// it: a byte lock with futex_waitv, flock(2) with the doorbell (mechanism.h).
struct RepairUnderWay {
  int fd;
  explicit RepairUnderWay(const EmptyFile& file) : fd(file.open_it()) {
    if (cross_process::uses_doorbell()) {
      EXPECT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);
      return;
    }
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = shared_region::kInitLock;
    lock.l_len = 1;
    EXPECT_EQ(fcntl(fd, F_OFD_SETLK, &lock), 0);
  }
  ~RepairUnderWay() { close(fd); }  // drops the lock, as the repairer's death would
};

TEST(SharedRegionTest, AnOpenerWaitsForARepairUnderWayThenRepairsWhatItsRepairerLeft) {
  EmptyFile file;
  auto repairer = std::make_unique<RepairUnderWay>(file);
  auto opening = std::async(std::launch::async, [&file] {
    const int fd = file.open_it();
    const shared_region::Opened opened = shared_region::adopt(fd, /*may_repair=*/true, 64);
    close(fd);
    return opened;
  });
  EXPECT_EQ(opening.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  repairer.reset();  // died before finishing
  const shared_region::Opened opened = opening.get();
  ASSERT_NE(opened.region, nullptr);
  EXPECT_TRUE(opened.created);
  shared_region::release(opened.region);
}

TEST(SharedRegionTest, AnOpenerGivesUpOnARepairThatOutlastsTheWait) {
  EmptyFile file;
  const RepairUnderWay repairer(file);
  const int fd = file.open_it();
  EXPECT_EQ(shared_region::adopt(fd, /*may_repair=*/true, 64).error,
            shared_region::OpenError::kBusy);
  close(fd);
}

TEST(SharedRegionTest, AFileTruncatedUnderItsUsersIsNoLongerIntactAndIsMappedAnewByTheNextOpener) {
  TemporaryRegion region;
  ASSERT_NE(region.opened.region, nullptr);
  EXPECT_TRUE(shared_region::intact(region.opened.region));
  ASSERT_EQ(truncate(region.path.c_str(), 0), 0);
  ASSERT_EQ(truncate(region.path.c_str(), shared_region::kHeaderBytes + 64), 0);
  EXPECT_FALSE(shared_region::intact(region.opened.region));
  const int fd = open(region.path.c_str(), O_RDWR | O_CLOEXEC);
  const shared_region::Opened anew = shared_region::adopt(fd, /*may_repair=*/true, 64);
  close(fd);
  ASSERT_NE(anew.region, nullptr);
  EXPECT_NE(anew.region, region.opened.region);
  EXPECT_TRUE(anew.created);
  EXPECT_TRUE(shared_region::intact(anew.region));
  // The old mapping stays for its users, and stays refused: the file is another region now.
  EXPECT_FALSE(shared_region::intact(region.opened.region));
  shared_region::release(anew.region);
}

TEST(SharedRegionTest, RepairsOnlyZerosAndNeverShortensTheFile) {
  // Zeros where the header goes, data after it: somebody's file, left as it is.
  EmptyFile data;
  const std::size_t long_file = shared_region::kHeaderBytes + (1 << 20);
  ASSERT_EQ(truncate(data.path.c_str(), static_cast<off_t>(long_file)), 0);
  int fd = data.open_it();
  ASSERT_EQ(pwrite(fd, "x", 1, static_cast<off_t>(long_file - 1)), 1);
  EXPECT_EQ(shared_region::adopt(fd, /*may_repair=*/true, 64).error,
            shared_region::OpenError::kNotARegion);
  close(fd);
  struct stat info {};
  ASSERT_EQ(stat(data.path.c_str(), &info), 0);
  EXPECT_EQ(static_cast<std::size_t>(info.st_size), long_file);

  // Zeros all along, longer than asked: repaired at its own length.
  EmptyFile zeros;
  ASSERT_EQ(truncate(zeros.path.c_str(), static_cast<off_t>(long_file)), 0);
  fd = zeros.open_it();
  const shared_region::Opened repaired = shared_region::adopt(fd, /*may_repair=*/true, 64);
  close(fd);
  ASSERT_NE(repaired.region, nullptr);
  EXPECT_EQ(repaired.size, std::uint64_t{1} << 20);
  shared_region::release(repaired.region);
}

TEST(SharedRegionTest, AFileTruncatedToNothingUnderItsUserIsRepairedAndTheOldMappingGoesQuietly) {
  TemporaryRegion region;
  ASSERT_NE(region.opened.region, nullptr);
  ASSERT_EQ(truncate(region.path.c_str(), 0), 0);
  // Neither an open nor the old mapping's release reads a page past the file's end (SIGBUS).
  const int early = open(region.path.c_str(), O_RDWR | O_CLOEXEC);
  EXPECT_EQ(shared_region::adopt(early, /*may_repair=*/false, 64).error,
            shared_region::OpenError::kUnfinished);
  close(early);
  shared_region::release(std::exchange(region.opened.region, nullptr));
  const int fd = open(region.path.c_str(), O_RDWR | O_CLOEXEC);
  const shared_region::Opened anew = shared_region::adopt(fd, /*may_repair=*/true, 64);
  close(fd);
  ASSERT_NE(anew.region, nullptr);
  EXPECT_TRUE(anew.created);
  shared_region::release(anew.region);
}

TEST(SharedRegionTest, EverySlotTakenRefusesAnotherIdentityUntilAHolderDiesOrEnds) {
  TemporaryRegion region;
  ASSERT_NE(region.opened.region, nullptr);
  const std::int32_t* word = region.opened.words;
  // Half the slots held by other processes, the other half by threads here.
  std::vector<std::unique_ptr<IdentityElsewhere>> elsewhere;
  for (std::size_t slot = 0; slot < shared_region::kSlots / 2; ++slot) {
    elsewhere.push_back(std::make_unique<IdentityElsewhere>(region, slot));
  }
  constexpr ThreadId kFirstHere = 100000;
  for (std::size_t i = 0; i < shared_region::kSlots - elsewhere.size(); ++i) {
    ASSERT_NE(shared_region::identity_at(word, kFirstHere + static_cast<ThreadId>(i)), kNoThread);
  }
  const ThreadId newcomer = kFirstHere + static_cast<ThreadId>(shared_region::kSlots);
  EXPECT_EQ(shared_region::identity_at(word, newcomer), kNoThread);

  // Two processes die: two slots come free, and no more.
  elsewhere[3]->die();
  elsewhere[7]->die();
  EXPECT_NE(shared_region::identity_at(word, newcomer), kNoThread);
  EXPECT_NE(shared_region::identity_at(word, newcomer + 1), kNoThread);
  EXPECT_EQ(shared_region::identity_at(word, newcomer + 2), kNoThread);
  // A thread here ends: its slot comes free.
  std::size_t ended = 0;
  shared_region::end_identities_of(kFirstHere, [&ended](ThreadId) { ++ended; });
  EXPECT_EQ(ended, 1u);
  EXPECT_NE(shared_region::identity_at(word, newcomer + 2), kNoThread);
  for (std::size_t i = 1; i < shared_region::kSlots; ++i) {
    shared_region::end_identities_of(kFirstHere + static_cast<ThreadId>(i), [](ThreadId) {});
  }
  for (ThreadId id = newcomer; id < newcomer + 3; ++id) {
    shared_region::end_identities_of(id, [](ThreadId) {});
  }
}

TEST(SharedRegionTest, WithTheDoorbellAHolderIsItsPidAndStartAndAReusedPidIsNotTakenForIt) {
  if (!cross_process::uses_doorbell()) {
    GTEST_SKIP() << "with futex_waitv a lock the kernel drops tells liveness; run with "
                    "PARKLOCK_CROSS_PROCESS=portable";
  }
  TemporaryRegion region;
  IdentityElsewhere holder(region, shared_region::kSlots - 1);
  const std::int32_t* word = region.opened.words;
  EXPECT_FALSE(shared_region::owner_ended(word, holder.identity()));
  // The pid now names a process that started at another time: the holder's pid, reused.
  auto* start =
      reinterpret_cast<std::uint32_t*>(reinterpret_cast<std::uint8_t*>(region.opened.words) -
                                       shared_region::kHeaderBytes + shared_region::kSlotsOffset +
                                       (shared_region::kSlots - 1) * shared_region::kSlotBytes) +
      4;
  const std::uint32_t recorded = atomic_ref<std::uint32_t>(*start).load();
  atomic_ref<std::uint32_t>(*start).store(recorded + 1);
  EXPECT_TRUE(shared_region::owner_ended(word, holder.identity()));
  atomic_ref<std::uint32_t>(*start).store(recorded);
  EXPECT_FALSE(shared_region::owner_ended(word, holder.identity()));
  holder.die();
  EXPECT_TRUE(shared_region::owner_ended(word, holder.identity()));
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
