// Regions other processes share, within one process: the files refused, creation and repair,
// uses and release, a truncated file noticed (POSIX; Windows refuses to shorten a mapped file),
// and identities that name a thread in the region until it ends. Waits across processes are
// tested with real processes in test/shared_region.test.js (a fork() without exec shares its
// parent's identities, so it cannot stand for another process here). Native x86-64 Linux and
// Windows (under Wine): the emulated targets lack some of the system calls (open-file-description
// locks).
#include "across_processes/shared_region.h"

#include <gtest/gtest.h>

#if (defined(__linux__) && defined(__x86_64__)) || defined(_WIN32)
#include <chrono>
#include <cstdlib>
#include <filesystem>
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

using testing::file_bytes;
using testing::open_path;
using testing::resize_path;
using testing::write_at;

// An empty file at a fresh path, removed at the end of the test.
struct EmptyFile {
  std::string path = testing::temporary_path();
  EmptyFile() {
    int error = 0;
    const os::FileHandle file = os::create_exclusive(path.c_str(), 0600, &error);
    EXPECT_NE(file, os::kNoFile);
    if (file != os::kNoFile) os::close_file(file);
  }
  ~EmptyFile() { std::remove(path.c_str()); }
  os::FileHandle open_it() const { return open_path(path); }
};

TEST(SharedRegionTest, RefusesAFileThatIsNotARegion) {
  EmptyFile garbage;
  ASSERT_TRUE(write_at(garbage.path, 0, "garbage", 7));
  const os::FileHandle file = garbage.open_it();
  const shared_region::Opened opened = shared_region::adopt(file, /*may_repair=*/true, 0);
  os::close_file(file);
  EXPECT_EQ(opened.region, nullptr);
  EXPECT_EQ(opened.error, shared_region::OpenError::kNotARegion);
}

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
  EXPECT_EQ(file_bytes(path), shared_region::kHeaderBytes + 64);
  EXPECT_EQ(shared_region::create(path.c_str(), 0600, 64).error, shared_region::OpenError::kExists);

  const os::FileHandle file = open_path(path);
  const shared_region::Opened again = shared_region::adopt(file, /*may_repair=*/true, 0);
  os::close_file(file);
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
  std::remove(path.c_str());
}

TEST(SharedRegionTest, ACreatorThatFindsThePathTakenLeavesNoTemporaryFileBehind) {
  const std::filesystem::path directory = testing::temporary_path();
  ASSERT_TRUE(std::filesystem::create_directory(directory));
  const std::string path = (directory / "region").string();
  const shared_region::Opened made = shared_region::create(path.c_str(), 0600, 64);
  ASSERT_NE(made.region, nullptr);
  // The loser of a creation race (with the doorbell, or on Windows: a named temporary file,
  // renamed or linked into place) removes what it made once it has let go of it.
  EXPECT_EQ(shared_region::create(path.c_str(), 0600, 64).error, shared_region::OpenError::kExists);
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    names.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(names, std::vector<std::string>{"region"});
  shared_region::release(made.region);
  std::filesystem::remove_all(directory);
}

TEST(SharedRegionTest, RepairsAnUnfinishedFileOnlyWhereAllowed) {
  EmptyFile empty;
  const os::FileHandle file = empty.open_it();
  EXPECT_EQ(shared_region::adopt(file, /*may_repair=*/false, 0).error,
            shared_region::OpenError::kUnfinished);
  const shared_region::Opened repaired = shared_region::adopt(file, /*may_repair=*/true, 128);
  os::close_file(file);
  ASSERT_NE(repaired.region, nullptr);
  EXPECT_TRUE(repaired.created);
  EXPECT_EQ(repaired.size, 128u);
  EXPECT_TRUE(shared_region::intact(repaired.region));
  shared_region::release(repaired.region);
}

// The init lock, held through another open file, as another process's repairer holds it: a byte
// lock with futex_waitv, the whole-file lock with the doorbell (mechanism.h).
struct RepairUnderWay {
  os::FileHandle file;
  explicit RepairUnderWay(const EmptyFile& empty) : file(empty.open_it()) {
    int error = 0;
#if defined(__linux__)
    if (!cross_process::uses_doorbell()) {
      EXPECT_TRUE(os::try_lock_byte(file, shared_region::kInitLock, &error));
      return;
    }
#endif
    EXPECT_TRUE(os::try_lock_file(file, &error));
  }
  ~RepairUnderWay() {
    os::close_file(file);
  }  // drops the lock, as the repairer's death would
};

TEST(SharedRegionTest, AnOpenerWaitsForARepairUnderWayThenRepairsWhatItsRepairerLeft) {
  EmptyFile file;
  auto repairer = std::make_unique<RepairUnderWay>(file);
  auto opening = std::async(std::launch::async, [&file] {
    const os::FileHandle handle = file.open_it();
    const shared_region::Opened opened = shared_region::adopt(handle, /*may_repair=*/true, 64);
    os::close_file(handle);
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
  const os::FileHandle handle = file.open_it();
  EXPECT_EQ(shared_region::adopt(handle, /*may_repair=*/true, 64).error,
            shared_region::OpenError::kBusy);
  os::close_file(handle);
}

#if defined(_WIN32)
TEST(SharedRegionTest, WindowsRefusesToShortenAMappedFile) {
  TemporaryRegion region;
  ASSERT_NE(region.opened.region, nullptr);
  EXPECT_FALSE(resize_path(region.path, 0));
  EXPECT_EQ(file_bytes(region.path), shared_region::kHeaderBytes + 64);
  EXPECT_TRUE(shared_region::intact(region.opened.region));
}
#else

TEST(SharedRegionTest, AFileTruncatedUnderItsUsersIsNoLongerIntactAndIsMappedAnewByTheNextOpener) {
  TemporaryRegion region;
  ASSERT_NE(region.opened.region, nullptr);
  EXPECT_TRUE(shared_region::intact(region.opened.region));
  ASSERT_TRUE(resize_path(region.path, 0));
  ASSERT_TRUE(resize_path(region.path, shared_region::kHeaderBytes + 64));
  EXPECT_FALSE(shared_region::intact(region.opened.region));
  const os::FileHandle file = open_path(region.path);
  const shared_region::Opened anew = shared_region::adopt(file, /*may_repair=*/true, 64);
  os::close_file(file);
  ASSERT_NE(anew.region, nullptr);
  EXPECT_NE(anew.region, region.opened.region);
  EXPECT_TRUE(anew.created);
  EXPECT_TRUE(shared_region::intact(anew.region));
  // The old mapping stays for its users, and stays refused: the file is another region now.
  EXPECT_FALSE(shared_region::intact(region.opened.region));
  shared_region::release(anew.region);
}

TEST(SharedRegionTest, AFileTruncatedToNothingUnderItsUserIsRepairedAndTheOldMappingGoesQuietly) {
  TemporaryRegion region;
  ASSERT_NE(region.opened.region, nullptr);
  ASSERT_TRUE(resize_path(region.path, 0));
  // Neither an open nor the old mapping's release reads a page past the file's end (SIGBUS).
  const os::FileHandle early = open_path(region.path);
  EXPECT_EQ(shared_region::adopt(early, /*may_repair=*/false, 64).error,
            shared_region::OpenError::kUnfinished);
  os::close_file(early);
  shared_region::release(std::exchange(region.opened.region, nullptr));
  const os::FileHandle file = open_path(region.path);
  const shared_region::Opened anew = shared_region::adopt(file, /*may_repair=*/true, 64);
  os::close_file(file);
  ASSERT_NE(anew.region, nullptr);
  EXPECT_TRUE(anew.created);
  shared_region::release(anew.region);
}
#endif

TEST(SharedRegionTest, RepairsOnlyZerosAndNeverShortensTheFile) {
  // Zeros where the header goes, data after it: somebody's file, left as it is.
  EmptyFile data;
  const std::size_t long_file = shared_region::kHeaderBytes + (1 << 20);
  ASSERT_TRUE(resize_path(data.path, long_file));
  ASSERT_TRUE(write_at(data.path, long_file - 1, "x", 1));
  os::FileHandle file = data.open_it();
  EXPECT_EQ(shared_region::adopt(file, /*may_repair=*/true, 64).error,
            shared_region::OpenError::kNotARegion);
  os::close_file(file);
  EXPECT_EQ(file_bytes(data.path), long_file);

  // Zeros all along, longer than asked: repaired at its own length.
  EmptyFile zeros;
  ASSERT_TRUE(resize_path(zeros.path, long_file));
  file = zeros.open_it();
  const shared_region::Opened repaired = shared_region::adopt(file, /*may_repair=*/true, 64);
  os::close_file(file);
  ASSERT_NE(repaired.region, nullptr);
  EXPECT_EQ(repaired.size, std::uint64_t{1} << 20);
  shared_region::release(repaired.region);
}

TEST(SharedRegionTest, EverySlotTakenRefusesAnotherIdentityUntilAHolderDiesOrEnds) {
  TemporaryRegion region;
  ASSERT_NE(region.opened.region, nullptr);
  const std::int32_t* word = region.opened.words;
  // Eight slots held by other processes, the others by threads here.
  std::vector<std::unique_ptr<IdentityElsewhere>> elsewhere;
  for (std::size_t slot = 0; slot < 8; ++slot) {
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
  EXPECT_EQ(shared_region::describe(word, mine).pid, os::current_pid());

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
