#include "shared_region.h"

#include <array>
#include <atomic>
#include <mutex>

#include "atomic_ref.h"

#if defined(__linux__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>
#endif

namespace parklock::shared_region {

#if defined(__linux__)

struct Region {
  std::uint8_t* base = nullptr;  // the header; the user area follows it
  std::uint64_t user_bytes = 0;
  int fd = -1;  // kept open: it carries this process's liveness locks
  dev_t device = 0;
  ino_t inode = 0;
  // Slots this process took, written under `taking`: a thread's slot is looked up here, not in
  // the file, which another process could scribble on. Read without the lock by owner_ended().
  std::mutex taking;
  std::array<std::atomic<ThreadId>, kSlots> local_thread{};  // 0: not ours

  std::uintptr_t user_begin() const {
    return reinterpret_cast<std::uintptr_t>(base) + kHeaderBytes;
  }
  std::uintptr_t user_end() const { return user_begin() + user_bytes; }
  atomic_ref<std::uint32_t> word(std::size_t offset) const {
    return atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(base + offset));
  }
  atomic_ref<std::uint32_t> slot_field(std::size_t slot, std::size_t field) const {
    return word(kSlotsOffset + slot * kSlotBytes + field * 4);
  }
  atomic_ref<std::uint32_t> generation(std::size_t slot) const { return slot_field(slot, 0); }
  atomic_ref<std::uint32_t> pid(std::size_t slot) const { return slot_field(slot, 1); }
  atomic_ref<std::uint32_t> thread(std::size_t slot) const { return slot_field(slot, 2); }
  atomic_ref<std::uint32_t> state(std::size_t slot) const { return slot_field(slot, 3); }
};

namespace {

constexpr std::size_t kMostRegions = 64;

// Regions are appended and never removed, so readers walk the first `mapped_count` entries
// without a lock.
std::array<std::atomic<Region*>, kMostRegions> mapped{};
using detail::mapped_count;
std::mutex opening;  // serialises open(): one mapping per file

bool liveness_lock(const Region& region, std::size_t slot, short type) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = kLivenessBase + static_cast<std::int64_t>(slot);
  lock.l_len = 1;
  return fcntl(region.fd, F_OFD_SETLK, &lock) == 0;
}

// Whether some open file description (another process's: ours never conflicts with itself)
// holds the liveness lock of `slot`.
bool liveness_held_elsewhere(const Region& region, std::size_t slot) {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = kLivenessBase + static_cast<std::int64_t>(slot);
  lock.l_len = 1;
  if (fcntl(region.fd, F_OFD_GETLK, &lock) != 0) return true;  // cannot tell: assume alive
  return lock.l_type != F_UNLCK;
}

constexpr ThreadId identity_of(std::size_t slot, std::uint32_t generation) {
  return kRegionIdentity |
         static_cast<ThreadId>((generation & ((1u << kGenerationBits) - 1)) << kSlotBits) |
         static_cast<ThreadId>(slot);
}

constexpr std::size_t slot_of(ThreadId identity) {
  return static_cast<std::size_t>(identity) & ((std::size_t{1} << kSlotBits) - 1);
}

// Whether `slot`, as another process or an ended thread left it, may be taken again.
bool slot_is_dead(const Region& region, std::size_t slot, std::uint32_t state) {
  switch (state) {
    case kFree:
    case kEnded:
      return true;
    case kLive:
      return region.local_thread[slot] == kNoThread && !liveness_held_elsewhere(region, slot);
    default:  // kClaiming: another process is taking it
      return false;
  }
}

ThreadId take_slot(Region& region, ThreadId thread) {
  for (std::size_t slot = 0; slot < kSlots; ++slot) {
    std::uint32_t state = region.state(slot).load(std::memory_order_acquire);
    if (!slot_is_dead(region, slot, state)) continue;
    if (!region.state(slot).compare_exchange_strong(state, kClaiming, std::memory_order_acq_rel)) {
      continue;
    }
    // Held only if a process took the slot and was still alive after all: put it back.
    if (!liveness_lock(region, slot, F_WRLCK)) {
      region.state(slot).store(state, std::memory_order_release);
      continue;
    }
    const std::uint32_t generation = region.generation(slot).load(std::memory_order_relaxed) + 1;
    region.generation(slot).store(generation, std::memory_order_relaxed);
    region.pid(slot).store(static_cast<std::uint32_t>(getpid()), std::memory_order_relaxed);
    region.thread(slot).store(static_cast<std::uint32_t>(thread), std::memory_order_relaxed);
    region.state(slot).store(kLive, std::memory_order_release);
    region.local_thread[slot] = thread;
    return identity_of(slot, generation);
  }
  return kNoThread;
}

Opened failure(OpenError error, int error_number = 0) {
  Opened opened;
  opened.error = error;
  opened.error_number = error_number;
  return opened;
}

// Waits (up to a second) for a creator to finish the header, and checks it.
Opened check_header(const std::uint8_t* header, std::uint64_t file_bytes) {
  const atomic_ref<const std::uint32_t> magic(*reinterpret_cast<const std::uint32_t*>(header));
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (magic.load(std::memory_order_acquire) != kMagic) {
    if (std::chrono::steady_clock::now() > give_up) return failure(OpenError::kNotARegion);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  Opened opened;
  const std::uint32_t version = *reinterpret_cast<const std::uint32_t*>(header + 4);
  if (version != kVersion) {
    opened.error = OpenError::kVersion;
    opened.found_version = version;
    return opened;
  }
  opened.size = *reinterpret_cast<const std::uint64_t*>(header + 8);
  if (opened.size > kMaxUserBytes || kHeaderBytes + opened.size > file_bytes) {
    return failure(OpenError::kTooSmall);
  }
  return opened;
}

// An existing file: waits (up to a second) for its creator to size it and finish its header,
// and checks the header; the result's size is the region's.
Opened wait_until_ready(int fd, std::uint64_t requested) {
  struct stat now {};
  if (fstat(fd, &now) != 0) return failure(OpenError::kSystem, errno);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (static_cast<std::uint64_t>(now.st_size) < kHeaderBytes) {
    if (std::chrono::steady_clock::now() > give_up) return failure(OpenError::kNotARegion);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (fstat(fd, &now) != 0) return failure(OpenError::kSystem, errno);
  }
  void* header = mmap(nullptr, kHeaderBytes, PROT_READ, MAP_SHARED, fd, 0);
  if (header == MAP_FAILED) return failure(OpenError::kSystem, errno);
  const Opened checked = check_header(static_cast<const std::uint8_t*>(header),
                                      static_cast<std::uint64_t>(now.st_size));
  munmap(header, kHeaderBytes);
  if (checked.error == OpenError::kNone && requested > checked.size) {
    return failure(OpenError::kTooSmall);
  }
  return checked;
}

Opened map_region(int fd, const struct stat& info, bool created, std::uint64_t size) {
  if (created && ftruncate(fd, static_cast<off_t>(kHeaderBytes + size)) != 0) {
    return failure(OpenError::kSystem, errno);
  }
  void* base = mmap(nullptr, kHeaderBytes + size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return failure(OpenError::kSystem, errno);
  auto* region = new Region();
  region->base = static_cast<std::uint8_t*>(base);
  region->user_bytes = size;
  region->fd = fd;
  region->device = info.st_dev;
  region->inode = info.st_ino;
  if (created) {
    *reinterpret_cast<std::uint32_t*>(region->base + 4) = kVersion;
    *reinterpret_cast<std::uint64_t*>(region->base + 8) = size;
    region->word(0).store(kMagic, std::memory_order_release);
  }
  Opened opened;
  opened.region = region;
  opened.words = reinterpret_cast<std::int32_t*>(region->user_begin());
  opened.size = size;
  return opened;
}

}  // namespace

bool supported() noexcept {
  return true;
}

Opened adopt(int caller_fd, bool created, std::uint64_t size) {
  if (size > kMaxUserBytes) return failure(OpenError::kTooSmall);
  struct stat info {};
  if (fstat(caller_fd, &info) != 0) return failure(OpenError::kSystem, errno);
  if (!S_ISREG(info.st_mode)) return failure(OpenError::kNotRegular);
  if (info.st_uid != geteuid()) return failure(OpenError::kForeignOwner);
  if (!created) {
    // Outside the lock: another thread of this process may be the creator it waits for.
    const Opened ready = wait_until_ready(caller_fd, size);
    if (ready.error != OpenError::kNone) return ready;
    size = ready.size;
  }
  const std::lock_guard<std::mutex> guard(opening);
  const std::size_t count = mapped_count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < count; ++i) {
    Region* region = mapped[i].load(std::memory_order_acquire);
    if (region->device != info.st_dev || region->inode != info.st_ino) continue;
    if (created || size > region->user_bytes) return failure(OpenError::kTooSmall);
    Opened opened;
    opened.region = region;
    opened.words = reinterpret_cast<std::int32_t*>(region->user_begin());
    opened.size = region->user_bytes;
    return opened;
  }
  if (count == kMostRegions) return failure(OpenError::kTooMany);
  const int fd = fcntl(caller_fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return failure(OpenError::kSystem, errno);
  Opened opened = map_region(fd, info, created, size);
  if (opened.region == nullptr) {
    close(fd);
    return opened;
  }
  mapped[count].store(opened.region, std::memory_order_release);
  mapped_count.store(count + 1, std::memory_order_release);
  return opened;
}

Region* region_at(const void* address) noexcept {
  const std::size_t count = mapped_count.load(std::memory_order_acquire);
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  for (std::size_t i = 0; i < count; ++i) {
    Region* region = mapped[i].load(std::memory_order_acquire);
    if (at >= region->user_begin() && at < region->user_end()) return region;
  }
  return nullptr;
}

ThreadId identity_in_region(const void* word, ThreadId thread) noexcept {
  Region* region = region_at(word);
  if (region == nullptr) return thread;
  // The identity this OS thread used last. Still its own while the slot names `thread` and the
  // generation is unchanged: only end_identities() gives a slot up, and only taking it bumps it.
  thread_local struct {
    const Region* region = nullptr;
    ThreadId thread = kNoThread;
    ThreadId identity = kNoThread;
  } last;
  if (last.region == region && last.thread == thread) {
    const std::size_t slot = slot_of(last.identity);
    if (region->local_thread[slot] == thread &&
        identity_of(slot, region->generation(slot).load(std::memory_order_relaxed)) ==
            last.identity) {
      return last.identity;
    }
  }
  ThreadId identity = kNoThread;
  {
    const std::lock_guard<std::mutex> guard(region->taking);
    for (std::size_t slot = 0; slot < kSlots && identity == kNoThread; ++slot) {
      if (region->local_thread[slot] == thread) {
        identity = identity_of(slot, region->generation(slot).load(std::memory_order_relaxed));
      }
    }
    if (identity == kNoThread) identity = take_slot(*region, thread);
  }
  if (identity != kNoThread) last = {region, thread, identity};
  return identity;
}

bool region_owner_ended(const void* word, ThreadId owner) noexcept {
  const Region* region = region_at(word);
  // Outside every region a word names this process's threads, whatever their bits.
  if (region == nullptr) return thread_ended(owner);
  const std::size_t slot = slot_of(owner);
  if (slot >= kSlots) return true;  // no slot ever made that identity
  const std::uint32_t state = region->state(slot).load(std::memory_order_acquire);
  if (identity_of(slot, region->generation(slot).load(std::memory_order_acquire)) != owner) {
    return true;  // the slot was taken again: its old owner ended
  }
  if (state != kLive) return true;
  const ThreadId local = region->local_thread[slot];
  if (local != kNoThread) return thread_ended(local);
  return !liveness_held_elsewhere(*region, slot);
}

std::size_t end_identities(ThreadId thread, ThreadId* out, std::size_t capacity) noexcept {
  std::size_t count = 0;
  const std::size_t regions = mapped_count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < regions && count < capacity; ++i) {
    Region* region = mapped[i].load(std::memory_order_acquire);
    const std::lock_guard<std::mutex> guard(region->taking);
    for (std::size_t slot = 0; slot < kSlots; ++slot) {
      if (region->local_thread[slot] != thread) continue;
      region->local_thread[slot] = kNoThread;
      region->state(slot).store(kEnded, std::memory_order_release);
      liveness_lock(*region, slot, F_UNLCK);
      out[count++] = identity_of(slot, region->generation(slot).load(std::memory_order_relaxed));
      break;
    }
  }
  return count;
}

IdentityInfo describe(const void* word, ThreadId identity) noexcept {
  const Region* region = region_at(word);
  if (region == nullptr || !is_region_identity(identity)) return {};
  const std::size_t slot = slot_of(identity);
  if (slot >= kSlots ||
      identity_of(slot, region->generation(slot).load(std::memory_order_acquire)) != identity) {
    return {};
  }
  return {static_cast<std::int32_t>(region->pid(slot).load(std::memory_order_relaxed)),
          static_cast<ThreadId>(region->thread(slot).load(std::memory_order_relaxed)),
          region->local_thread[slot].load(std::memory_order_relaxed)};
}

// --- The registration ledger ---

LedgerPlace ledger_place(const void* word) noexcept {
  const Region* region = region_at(word);
  if (region == nullptr) return {};
  return {reinterpret_cast<std::uint64_t*>(region->base + kLedgerOffset),
          reinterpret_cast<std::uint8_t*>(region->user_begin()), region->user_bytes};
}

#else  // no cross-process waits here yet

struct Region {};

bool supported() noexcept {
  return false;
}
Opened adopt(int, bool, std::uint64_t) {
  Opened opened;
  opened.error = OpenError::kUnsupported;
  return opened;
}
Region* region_at(const void*) noexcept {
  return nullptr;
}
ThreadId identity_in_region(const void*, ThreadId thread) noexcept {
  return thread;
}
bool region_owner_ended(const void*, ThreadId owner) noexcept {
  return thread_ended(owner);  // no region: a word names this process's threads
}
std::size_t end_identities(ThreadId, ThreadId*, std::size_t) noexcept {
  return 0;
}
IdentityInfo describe(const void*, ThreadId) noexcept {
  return {};
}
LedgerPlace ledger_place(const void*) noexcept {
  return {};
}

#endif

}  // namespace parklock::shared_region
