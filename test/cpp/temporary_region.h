// A region other processes could share (shared_region.h), in a temporary file of this process,
// and identities of other processes there: for the C++ tests of regions and of the relay. Linux
// and Windows, where these tests run.
#pragma once

#if defined(__linux__) || defined(_WIN32)
#if defined(__linux__)
#include <fcntl.h>
#include <unistd.h>
#endif

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "across_processes/mechanism.h"
#include "across_processes/shared_region.h"
#include "lot/atomic_ref.h"
#include "os/process_start.h"
#include "os/region_file.h"
#include "sleeping_child.h"

namespace parklock::testing {

// A fresh path in the system's temporary directory.
inline std::string temporary_path() {
  static std::atomic<int> made{0};
  const std::string name = "parklock-region-test-" + std::to_string(os::current_pid()) + "-" +
                           std::to_string(made.fetch_add(1));
#if defined(_WIN32)
  char directory[MAX_PATH + 1];
  const DWORD length = GetTempPathA(MAX_PATH + 1, directory);
  return std::string(directory, length) + name;
#else
  return "/tmp/" + name;
#endif
}

// The file `path`, opened for reading and writing (kNoFile if it cannot be).
inline os::FileHandle open_path(const std::string& path) {
  int error = 0;
  return os::open_existing(path.c_str(), &error);
}

// Writes `length` bytes at `offset` of the file `path`, which exists.
inline bool write_at(const std::string& path, std::uint64_t offset, const char* bytes,
                     std::size_t length) {
  std::FILE* file = std::fopen(path.c_str(), "r+b");
  if (file == nullptr) return false;
  const bool written = std::fseek(file, static_cast<long>(offset), SEEK_SET) == 0 &&
                       std::fwrite(bytes, 1, length, file) == length;
  return std::fclose(file) == 0 && written;
}

// The length of the file `path`, or resizes it (nobody mapping it, on Windows).
inline std::uint64_t file_bytes(const std::string& path) {
  const os::FileHandle file = open_path(path);
  os::FileFacts facts;
  int error = 0;
  if (file != os::kNoFile) {
    os::facts_of(file, &facts, &error);
    os::close_file(file);
  }
  return facts.bytes;
}
inline bool resize_path(const std::string& path, std::uint64_t bytes) {
  const os::FileHandle file = open_path(path);
  int error = 0;
  const bool resized = file != os::kNoFile && os::resize_file(file, bytes, &error);
  if (file != os::kNoFile) os::close_file(file);
  return resized;
}

// A fresh region of `size` bytes, its file removed and its use given back at the end of the test
// (the mapping goes once nothing else uses it: a relay that still watches a word there keeps it).
struct TemporaryRegion {
  std::string path;
  shared_region::Opened opened;

  explicit TemporaryRegion(std::uint64_t size = 64) : path(temporary_path()) {
    int error = 0;
    const os::FileHandle file = os::create_exclusive(path.c_str(), 0600, &error);
    if (file == os::kNoFile) std::abort();
    // An empty file, which adopt() repairs into a region as a creator that died would have left
    // it.
    opened = shared_region::adopt(file, /*may_repair=*/true, size);
    os::close_file(file);
  }
  ~TemporaryRegion() {
    // Windows removes no mapped file: the use first (a relay may still keep the mapping; then
    // the file stays in the temporary directory).
    if (opened.region != nullptr) shared_region::release(opened.region);
    std::remove(path.c_str());
  }
  TemporaryRegion(const TemporaryRegion&) = delete;
  TemporaryRegion& operator=(const TemporaryRegion&) = delete;
};

// A live thread of another process in `region`: the slot `slot` (pick one this process's
// threads do not reach, from the top) made live as that process would make it. With futex_waitv
// (mechanism.h), its liveness lock is held by an open file description of the region's file
// that is not the region's own; with the doorbell, the slot names a child process that sleeps
// (sleeping_child.h).
// die() drops that lock, or kills and reaps that child, as when that process dies: from then on
// its identity reads "owner ended", and only the relay's look at the holders tells waiters
// already queued.
class IdentityElsewhere {
 public:
  IdentityElsewhere(const TemporaryRegion& region, std::size_t slot) {
    using namespace shared_region;
    std::uint32_t pid = static_cast<std::uint32_t>(os::current_pid()) + 1;
    std::uint64_t start = 0;
    if (cross_process::uses_doorbell()) {
      child_ = std::make_unique<testing::SleepingChild>();
      pid = static_cast<std::uint32_t>(child_->pid());
      start = os::process_start(child_->pid());
    } else {
#if defined(__linux__)
      fd_ = open(region.path.c_str(), O_RDWR | O_CLOEXEC);
      struct flock lock {};
      lock.l_type = F_WRLCK;
      lock.l_whence = SEEK_SET;
      lock.l_start = kLivenessBase + static_cast<std::int64_t>(slot);
      lock.l_len = 1;
      if (fd_ < 0 || fcntl(fd_, F_OFD_SETLK, &lock) != 0) std::abort();
#endif
    }
    auto* slot_fields =
        reinterpret_cast<std::uint32_t*>(reinterpret_cast<std::uint8_t*>(region.opened.words) -
                                         kHeaderBytes + kSlotsOffset + slot * kSlotBytes);
    const auto field = [slot_fields](int i) { return atomic_ref<std::uint32_t>(slot_fields[i]); };
    const std::uint32_t generation = field(0).load(std::memory_order_relaxed) + 1;
    field(0).store(generation, std::memory_order_relaxed);
    field(1).store(pid, std::memory_order_relaxed);
    field(2).store(1, std::memory_order_relaxed);
    field(4).store(static_cast<std::uint32_t>(start), std::memory_order_relaxed);
    field(5).store(static_cast<std::uint32_t>(start >> 32), std::memory_order_relaxed);
    field(3).store(kLive, std::memory_order_release);
    identity_ = kRegionIdentity |
                static_cast<ThreadId>((generation & ((1u << kGenerationBits) - 1)) << kSlotBits) |
                static_cast<ThreadId>(slot);
  }
  ~IdentityElsewhere() {
    die();
  }
  IdentityElsewhere(const IdentityElsewhere&) = delete;
  IdentityElsewhere& operator=(const IdentityElsewhere&) = delete;

  ThreadId identity() const {
    return identity_;
  }
  void die() {
#if defined(__linux__)
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
#endif
    child_.reset();
  }

 private:
#if defined(__linux__)
  int fd_ = -1;
#endif
  std::unique_ptr<testing::SleepingChild> child_;
  ThreadId identity_ = kNoThread;
};

}  // namespace parklock::testing

#endif
