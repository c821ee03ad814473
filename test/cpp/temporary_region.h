// A region other processes could share (shared_region.h), in a temporary file of this process,
// and identities of other processes there: for the C++ tests of regions and of the relay. Linux
// only, where regions exist.
#pragma once

#if defined(__linux__)
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "across_processes/mechanism.h"
#include "across_processes/shared_region.h"
#include "lot/atomic_ref.h"
#include "os/process_start.h"

namespace parklock::testing {

// A fresh region of `size` bytes, its file removed and its use given back at the end of the test
// (the mapping goes once nothing else uses it: a relay that still watches a word there keeps it).
struct TemporaryRegion {
  std::string path;
  shared_region::Opened opened;

  explicit TemporaryRegion(std::uint64_t size = 64) {
    char name[] = "/tmp/parklock-region-test-XXXXXX";
    const int fd = mkstemp(name);
    path = name;
    // mkstemp made an empty file, which adopt() repairs into a region as a creator that died
    // would have left it.
    opened = shared_region::adopt(fd, /*may_repair=*/true, size);
    close(fd);
  }
  ~TemporaryRegion() {
    unlink(path.c_str());
    if (opened.region != nullptr) shared_region::release(opened.region);
  }
  TemporaryRegion(const TemporaryRegion&) = delete;
  TemporaryRegion& operator=(const TemporaryRegion&) = delete;
};

// A live thread of another process in `region`: the slot `slot` (pick one this process's
// threads do not reach, from the top) made live as that process would make it. With futex_waitv
// (mechanism.h), its liveness lock is held by an open file description of the region's file
// that is not the region's own; with the doorbell, the slot names a child process that sleeps.
// die() drops that lock, or kills and reaps that child, as when that process dies: from then on
// its identity reads "owner ended", and only the relay's look at the holders tells waiters
// already queued.
class IdentityElsewhere {
 public:
  IdentityElsewhere(const TemporaryRegion& region, std::size_t slot) {
    using namespace shared_region;
    std::uint32_t pid = static_cast<std::uint32_t>(getpid()) + 1;
    std::uint64_t start = 0;
    if (cross_process::uses_doorbell()) {
      child_ = fork();
      if (child_ < 0) std::abort();
      if (child_ == 0) {
        for (;;) pause();
      }
      pid = static_cast<std::uint32_t>(child_);
      start = os::process_start(child_);
    } else {
      fd_ = open(region.path.c_str(), O_RDWR | O_CLOEXEC);
      struct flock lock {};
      lock.l_type = F_WRLCK;
      lock.l_whence = SEEK_SET;
      lock.l_start = kLivenessBase + static_cast<std::int64_t>(slot);
      lock.l_len = 1;
      if (fd_ < 0 || fcntl(fd_, F_OFD_SETLK, &lock) != 0) std::abort();
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
  ~IdentityElsewhere() { die(); }
  IdentityElsewhere(const IdentityElsewhere&) = delete;
  IdentityElsewhere& operator=(const IdentityElsewhere&) = delete;

  ThreadId identity() const { return identity_; }
  void die() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
    if (child_ > 0) {
      kill(child_, SIGKILL);
      waitpid(child_, nullptr, 0);
    }
    child_ = -1;
  }

 private:
  int fd_ = -1;
  pid_t child_ = -1;
  ThreadId identity_ = kNoThread;
};

}  // namespace parklock::testing

#endif
