#include "across_processes/shared_region.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <string>

#include "across_processes/mechanism.h"
#include "lot/atomic_ref.h"

#if defined(PARKLOCK_ACROSS_PROCESSES)
#include <cerrno>
#include <chrono>
#include <thread>

#include "os/process_start.h"
#include "os/sleeper_event.h"
#endif

namespace parklock::shared_region {

#if defined(PARKLOCK_ACROSS_PROCESSES)

struct Region {
  std::uint8_t* base = nullptr;  // the header; the user area follows it
  std::uint64_t user_bytes = 0;
  std::uint64_t identity = 0;         // the file's identity (header offset 16), as it was mapped
  os::FileHandle file = os::kNoFile;  // kept open: it carries this process's liveness locks
  std::uint64_t device = 0;           // with file_id: which file (os::FileFacts)
  std::uint64_t file_id = 0;
  // Uses (shared_region.h): taken by a holder of one, or under `registry`; the last given back
  // under `registry`, so that a new use of a region found there cannot race its unmapping.
  std::atomic<std::size_t> uses{1};
  // Slots this process took, written under `taking`: a thread's slot is looked up here, not in
  // the file, which another process could scribble on. Read without the lock by owner_ended().
  std::mutex taking;
  std::array<std::atomic<ThreadId>, kSlots> local_thread{};  // 0: not ours
  // Other processes' doorbell sleepers, as this process's rings wake them (doorbell.h).
  os::SleeperEvents sleeper_events;

  std::size_t mapped_bytes() const { return kHeaderBytes + user_bytes; }
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
  std::uint64_t start(std::size_t slot) const {
    return std::uint64_t{slot_field(slot, 4).load(std::memory_order_relaxed)} |
           (std::uint64_t{slot_field(slot, 5).load(std::memory_order_relaxed)} << 32);
  }
  void set_start(std::size_t slot, std::uint64_t start) const {
    slot_field(slot, 4).store(static_cast<std::uint32_t>(start), std::memory_order_relaxed);
    slot_field(slot, 5).store(static_cast<std::uint32_t>(start >> 32), std::memory_order_relaxed);
  }
  // The file's identity as the header holds it now.
  std::uint64_t identity_in_file() const {
    return std::uint64_t{word(kIdentityOffset).load(std::memory_order_relaxed)} |
           (std::uint64_t{word(kIdentityOffset + 4).load(std::memory_order_relaxed)} << 32);
  }
};

namespace {

// The regions mapped, as spans of user memory, walked without a lock by region_at() on every
// parking-lot operation while any is mapped. Changes (a region mapped or released) are made under
// `registry`, and `changes` is odd while they are under way: a walk that saw it change looks
// again (a sequence lock), so that it never takes one region's start with another's end. The
// first `mapped_count` spans are in use, in the order of their addresses, which do not overlap.
struct Span {
  std::atomic<std::uintptr_t> begin{0};
  std::atomic<std::uintptr_t> end{0};
  std::atomic<Region*> region{nullptr};
};
std::array<Span, kMostRegions> spans;
std::atomic<std::uint32_t> changes{0};
using detail::mapped_count;
std::mutex registry;

// Makes `changes` odd for its lifetime; the caller holds `registry`.
class Changing {
 public:
  Changing() {
    changes.store(changes.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
  }
  ~Changing() {
    changes.store(changes.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  Changing(const Changing&) = delete;
  Changing& operator=(const Changing&) = delete;
};

void set_span(std::size_t index, std::uintptr_t begin, std::uintptr_t end, Region* region) {
  spans[index].begin.store(begin, std::memory_order_release);
  spans[index].end.store(end, std::memory_order_release);
  spans[index].region.store(region, std::memory_order_release);
}

void copy_span(std::size_t to, std::size_t from) {
  set_span(to, spans[from].begin.load(std::memory_order_relaxed),
           spans[from].end.load(std::memory_order_relaxed),
           spans[from].region.load(std::memory_order_relaxed));
}

// Under `registry`, with `changes` odd: `region` takes its place in the order of addresses.
void insert_span(Region* region) {
  const std::size_t count = mapped_count.load(std::memory_order_relaxed);
  std::size_t at = count;
  for (; at > 0 && spans[at - 1].begin.load(std::memory_order_relaxed) > region->user_begin();
       --at) {
    copy_span(at, at - 1);
  }
  set_span(at, region->user_begin(), region->user_end(), region);
  mapped_count.store(count + 1, std::memory_order_relaxed);
}

// Under `registry`, with `changes` odd: the spans after `region`'s move up into its place.
void remove_span(const Region* region) {
  const std::size_t count = mapped_count.load(std::memory_order_relaxed);
  std::size_t at = 0;
  while (at < count && spans[at].region.load(std::memory_order_relaxed) != region) ++at;
  if (at == count) return;
  for (; at + 1 < count; ++at) copy_span(at, at + 1);
  set_span(count - 1, 0, 0, nullptr);
  mapped_count.store(count - 1, std::memory_order_relaxed);
}

bool file_intact(const Region& region);

// Whether the file still holds every byte mapped and the header this process mapped. Checks the
// file's length first: reading a mapped page past the end of a truncated file raises SIGBUS.
bool whole_and_intact(const Region& region) {
  os::FileFacts now;
  int error = 0;
  return os::facts_of(region.file, &now, &error) && now.bytes >= region.mapped_bytes() &&
         file_intact(region);
}

// Under `registry`: the region of this file, if this process has it mapped and the file still
// holds what was mapped (a mapping of a file truncated since stays for its users, but a new
// opener maps the file as it is now).
Region* mapped_file(const os::FileFacts& facts) {
  const std::size_t count = mapped_count.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < count; ++i) {
    Region* region = spans[i].region.load(std::memory_order_relaxed);
    if (region->device == facts.device && region->file_id == facts.file &&
        whole_and_intact(*region)) {
      return region;
    }
  }
  return nullptr;
}

#if defined(__linux__)
constexpr std::int64_t liveness_byte(std::size_t slot) {
  return kLivenessBase + static_cast<std::int64_t>(slot);
}
#endif

std::uint32_t own_mechanism() {
  return cross_process::uses_doorbell() ? kDoorbellMechanism : kFutexWaitvMechanism;
}

// This process's start (os/process_start.h), as its slots record it.
std::uint64_t own_start() {
  static const std::uint64_t start = os::process_start(os::current_pid());
  return start;
}

// The doorbell mechanism's liveness: the slot's process runs, and is the one that took it.
// A slot of this process that no thread here holds was left by an earlier mapping of the file.
bool process_of_slot_alive(const Region& region, std::size_t slot) {
  const auto pid = static_cast<std::int32_t>(region.pid(slot).load(std::memory_order_relaxed));
  if (pid == os::current_pid()) return false;
  const std::uint64_t now = os::process_start(pid);
  if (now == os::kStartUnknown) return true;  // cannot tell: assume alive
  if (now == os::kNoProcess) return false;
  const std::uint64_t recorded = region.start(slot);
  return recorded == os::kStartUnknown || recorded == now;
}

// Whether the slot's process, another than this one, is alive (Identities, shared_region.h).
bool alive_elsewhere(const Region& region, std::size_t slot) {
#if defined(__linux__)
  // Another open file description's lock (ours never conflicts with itself).
  if (!cross_process::uses_doorbell())
    return os::byte_locked_elsewhere(region.file, liveness_byte(slot));
#endif
  return process_of_slot_alive(region, slot);
}

// Marks the claimed `slot` as this process's for as long as it lives: false if another process
// holds it after all (the futex_waitv mechanism's lock is taken).
bool take_liveness(const Region& region, std::size_t slot) {
#if defined(__linux__)
  int error = 0;
  if (!cross_process::uses_doorbell() &&
      !os::try_lock_byte(region.file, liveness_byte(slot), &error)) {
    return false;
  }
#endif
  region.set_start(slot, own_start());
  return true;
}

void give_up_liveness(const Region& region, std::size_t slot) {
#if defined(__linux__)
  if (!cross_process::uses_doorbell()) os::unlock_byte(region.file, liveness_byte(slot));
#else
  (void)region;
  (void)slot;
#endif
}

// The lock a repairer of an unfinished file holds (Creation, shared_region.h); false with
// `*error` (EAGAIN or EACCES: another holds it).
bool take_init_lock(os::FileHandle file, int* error) {
#if defined(__linux__)
  if (!cross_process::uses_doorbell()) return os::try_lock_byte(file, kInitLock, error);
#endif
  return os::try_lock_file(file, error);
}

void give_up_init_lock(os::FileHandle file) {
#if defined(__linux__)
  if (!cross_process::uses_doorbell()) {
    os::unlock_byte(file, kInitLock);
    return;
  }
#endif
  os::unlock_file(file);
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
      return region.local_thread[slot] == kNoThread && !alive_elsewhere(region, slot);
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
    if (!take_liveness(region, slot)) {
      region.state(slot).store(state, std::memory_order_release);
      continue;
    }
    const std::uint32_t generation = region.generation(slot).load(std::memory_order_relaxed) + 1;
    region.generation(slot).store(generation, std::memory_order_relaxed);
    region.pid(slot).store(static_cast<std::uint32_t>(os::current_pid()),
                           std::memory_order_relaxed);
    region.thread(slot).store(static_cast<std::uint32_t>(thread), std::memory_order_relaxed);
    region.state(slot).store(kLive, std::memory_order_release);
    region.local_thread[slot] = thread;
    return identity_of(slot, generation);
  }
  return kNoThread;
}

bool file_intact(const Region& region) {
  return region.word(0).load(std::memory_order_acquire) == kMagic &&
         region.identity_in_file() == region.identity;
}

Opened failure(OpenError error, int error_number = 0) {
  Opened opened;
  opened.error = error;
  opened.error_number = error_number;
  return opened;
}

Opened opened_from(Region* region) {
  Opened opened;
  opened.region = region;
  opened.words = reinterpret_cast<std::int32_t*>(region->user_begin());
  opened.size = region->user_bytes;
  return opened;
}

// A number that tells this file from every other made at the same path: it need not be secret.
std::uint64_t new_file_identity() {
  static std::atomic<std::uint64_t> made{0};
  std::uint64_t x =
      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      (static_cast<std::uint64_t>(os::current_pid()) << 40) ^
      (made.fetch_add(1, std::memory_order_relaxed) * 0x9e3779b97f4a7c15u);
  // splitmix64's finalizer spreads the bits.
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  x ^= x >> 31;
  return x == 0 ? 1 : x;
}

// Maps the whole file `file` (kHeaderBytes + `size` bytes, which it holds): a Region not yet
// registered, which owns `file` from then on.
Region* map_file(os::FileHandle file, const os::FileFacts& facts, std::uint64_t size,
                 OpenError* error, int* error_number) {
  void* base = os::map_file(file, kHeaderBytes + size, /*writable=*/true, error_number);
  if (base == nullptr) {
    *error = OpenError::kSystem;
    return nullptr;
  }
  auto* region = new Region();
  region->base = static_cast<std::uint8_t*>(base);
  region->user_bytes = size;
  region->file = file;
  region->device = facts.device;
  region->file_id = facts.file;
  return region;
}

void unmap(Region* region) {
  os::unmap_file(region->base, region->mapped_bytes());
  os::close_file(region->file);
  delete region;
}

// Makes the mapped, zeroed file of `region` a region: the magic goes last, so that an opener that
// sees it sees the rest.
void write_header(Region& region) {
  region.identity = new_file_identity();
  region.word(4).store(kVersion, std::memory_order_relaxed);
  region.word(8).store(static_cast<std::uint32_t>(region.user_bytes), std::memory_order_relaxed);
  region.word(12).store(static_cast<std::uint32_t>(region.user_bytes >> 32),
                        std::memory_order_relaxed);
  region.word(kIdentityOffset)
      .store(static_cast<std::uint32_t>(region.identity), std::memory_order_relaxed);
  region.word(kIdentityOffset + 4)
      .store(static_cast<std::uint32_t>(region.identity >> 32), std::memory_order_relaxed);
  region.word(kMechanismOffset).store(own_mechanism(), std::memory_order_relaxed);
  region.word(0).store(kMagic, std::memory_order_release);
}

// Registers `region` (one use, the caller's), or gives it up if this process has the most
// regions mapped. Or, where another thread of this process mapped the same file meanwhile, gives
// `region` up and returns a new use of that one.
Opened publish(Region* region, bool created) {
  {
    const std::lock_guard<std::mutex> guard(registry);
    os::FileFacts facts;
    facts.device = region->device;
    facts.file = region->file_id;
    Region* already = mapped_file(facts);
    const std::size_t count = mapped_count.load(std::memory_order_relaxed);
    if (already == nullptr && count < kMostRegions) {
      const Changing changing;
      insert_span(region);
      Opened opened = opened_from(region);
      opened.created = created;
      return opened;
    }
    if (already != nullptr) already->uses.fetch_add(1, std::memory_order_relaxed);
    unmap(region);
    if (already != nullptr) return opened_from(already);
  }
  return failure(OpenError::kTooMany);
}

// Whether a file without the magic holds nothing but what a creator that did not finish leaves:
// zeros, but for the version, the size, the identity and the mechanism, which a creator (of this
// layout, or of an earlier one) writes before the magic; and no more bytes than a region has.
// Anything else is not a region's, and not ours to overwrite. Past the header, only the file's data
// extents are read where the OS tells them (os::only_zeros()): a creator's file is sized with
// os::resize_file(), which need not store its zeros.
bool only_unfinished_zeros(os::FileHandle file, std::uint64_t file_bytes,
                           const std::uint8_t* header, std::size_t length) {
  if (file_bytes > kHeaderBytes + kMaxUserBytes) return false;
  const auto zero = [](std::uint8_t byte) { return byte == 0; };
  const auto zeros = [&](std::size_t from, std::size_t to) {
    return std::all_of(header + std::min(from, length), header + std::min(to, length), zero);
  };
  // The mechanism field (a creator of this layout writes it before the magic) holds 0 or 1.
  if (!zeros(0, 4) || !zeros(kIdentityOffset + 8, kMechanismOffset) ||
      !zeros(kMechanismOffset + 1, length) ||
      (length > kMechanismOffset && header[kMechanismOffset] > kDoorbellMechanism)) {
    return false;
  }
  return os::only_zeros(file, length, file_bytes);
}

// What the header of an existing file says, read through a read-only mapping of it: kNone with
// the region's size, kUnfinished (no magic yet, and nothing but an unfinished region's zeros),
// or why it is not a region.
Opened read_header(os::FileHandle file, std::uint64_t file_bytes) {
  if (file_bytes == 0) return failure(OpenError::kUnfinished);
  const std::size_t length = std::min<std::uint64_t>(file_bytes, kHeaderBytes);
  int error = 0;
  void* mapped = os::map_file(file, length, /*writable=*/false, &error);
  if (mapped == nullptr) return failure(OpenError::kSystem, error);
  const auto* header = static_cast<const std::uint8_t*>(mapped);
  const auto field = [header](std::size_t offset) {
    return atomic_ref<const std::uint32_t>(*reinterpret_cast<const std::uint32_t*>(header + offset))
        .load(std::memory_order_acquire);
  };
  Opened checked;
  if (length < 4 || field(0) != kMagic) {
    checked =
        failure(only_unfinished_zeros(file, file_bytes, header, length) ? OpenError::kUnfinished
                                                                        : OpenError::kNotARegion);
  } else if (length < kHeaderBytes) {
    checked = failure(OpenError::kTooSmall);
  } else if (field(4) != kVersion) {
    checked.error = OpenError::kVersion;
    checked.found_version = field(4);
  } else if (field(kMechanismOffset) != own_mechanism()) {
    checked.error = OpenError::kMechanism;
    checked.found_version = field(kMechanismOffset);
  } else {
    checked.size = std::uint64_t{field(8)} | (std::uint64_t{field(12)} << 32);
    if (checked.size > kMaxUserBytes || kHeaderBytes + checked.size > file_bytes) {
      checked = failure(OpenError::kTooSmall);
    }
  }
  os::unmap_file(mapped, length);
  return checked;
}

// An unfinished file (read_header()): repaired into a region of `size` user bytes under the init
// lock, or, once another process's repair has finished, read again. Never waits longer than
// kRepairWait, and only while another process holds the lock.
Opened repair(os::FileHandle file, bool may_repair, std::uint64_t size) {
  const auto give_up = std::chrono::steady_clock::now() + kRepairWait;
  int error = 0;
  while (!take_init_lock(file, &error)) {
    if (error != EAGAIN && error != EACCES) return failure(OpenError::kSystem, error);
    if (std::chrono::steady_clock::now() > give_up) return failure(OpenError::kBusy);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Under the lock: a repair that finished meanwhile shows in the file.
  os::FileFacts facts;
  Opened result;
  if (!os::facts_of(file, &facts, &error)) {
    result = failure(OpenError::kSystem, error);
  } else {
    result = read_header(file, facts.bytes);
  }
  if (result.error == OpenError::kUnfinished && may_repair) {
    // Never shorter than the file: a process may still map it from before a truncation.
    if (facts.bytes > kHeaderBytes)
      size = std::max<std::uint64_t>(size, (facts.bytes - kHeaderBytes + 7) & ~std::uint64_t{7});
    result = failure(OpenError::kSystem);
    const os::FileHandle own = os::duplicate_file(file, &result.error_number);
    if (own == os::kNoFile) {
      // result says why
    } else if (!os::resize_file(own, kHeaderBytes + size, &result.error_number)) {
      // Sized, never emptied first: a process may still map the file from before a truncation
      // (Integrity), and would fault on pages past a zero length. What it finds is zeros, or the
      // words it wrote there since, which name identities of no live slot.
      os::close_file(own);
    } else if (Region* region = map_file(own, facts, size, &result.error, &result.error_number)) {
      write_header(*region);
      result = publish(region, /*created=*/true);
    } else {
      os::close_file(own);
    }
  }
  give_up_init_lock(file);
  return result;
}

}  // namespace

bool supported() noexcept {
  return true;
}

namespace {

// Makes the region file, finished, and gives it the name `path`: made unnamed, or under a
// temporary name in `directory` (os::start_file()). kUnsupported: that way is not available here.
Opened make_and_link(const char* path, const std::string& directory, unsigned mode,
                     std::uint64_t size, bool unnamed) {
  // The doorbell mechanism's way (mechanism.h) has no unnamed files: macOS has none.
  if (unnamed && cross_process::uses_doorbell()) return failure(OpenError::kUnsupported);
  os::NewFile made;
  int error_number = 0;
  const os::Made started =
      os::start_file(directory, unnamed, mode, new_file_identity(), &made, &error_number);
  if (started == os::Made::kUnsupported) return failure(OpenError::kUnsupported);
  if (started != os::Made::kMade) return failure(OpenError::kSystem, error_number);
  os::FileFacts facts;
  OpenError error = OpenError::kSystem;
  Region* region = nullptr;
  if (!os::resize_file(made.file, kHeaderBytes + size, &error_number) ||
      !os::facts_of(made.file, &facts, &error_number)) {
    os::close_file(made.file);
  } else if ((region = map_file(made.file, facts, size, &error, &error_number)) == nullptr) {
    os::close_file(made.file);
  }
  if (region == nullptr) {
    os::abandon_file(made);
    return failure(error, error_number);
  }
  write_header(*region);
  const os::Made published = os::publish_file(made, path, &error_number);
  // Only where this is the way files are made: with futex_waitv it is a fallback, and the
  // processes sharing a directory there may see other pids (containers sharing a volume).
  if (!unnamed && cross_process::uses_doorbell()) os::remove_dead_creators_files(directory);
  if (published != os::Made::kMade) {
    unmap(region);
    os::abandon_file(made);
    if (published == os::Made::kUnsupported) return failure(OpenError::kUnsupported);
    return failure(published == os::Made::kExists ? OpenError::kExists : OpenError::kSystem,
                   error_number);
  }
  return publish(region, /*created=*/true);
}

// The last way, for a file system without hard links: the file is made empty at `path` and made
// a region in place, as the repair of an unfinished file is (adopt()), so that a kill in between
// leaves a file the next opener repairs.
Opened make_in_place(const char* path, unsigned mode, std::uint64_t size) {
  int error = 0;
  const os::FileHandle file = os::create_exclusive(path, mode, &error);
  if (file == os::kNoFile) {
    return failure(error == EEXIST ? OpenError::kExists : OpenError::kSystem, error);
  }
  Opened made = adopt(file, /*may_repair=*/true, size);
  os::close_file(file);
  return made;
}

}  // namespace

Opened create(const char* path, unsigned mode, std::uint64_t size) {
  if (size > kMaxUserBytes) return failure(OpenError::kTooSmall);
  const std::string directory = os::directory_of(path);
  Opened made = make_and_link(path, directory, mode, size, /*unnamed=*/true);
  if (made.error == OpenError::kUnsupported) {
    made = make_and_link(path, directory, mode, size, /*unnamed=*/false);
  }
  if (made.error == OpenError::kUnsupported) made = make_in_place(path, mode, size);
  return made;
}

Opened adopt(os::FileHandle caller_file, bool may_repair, std::uint64_t size) {
  if (size > kMaxUserBytes) return failure(OpenError::kTooSmall);
  os::FileFacts facts;
  int error_number = 0;
  if (!os::facts_of(caller_file, &facts, &error_number)) {
    return failure(OpenError::kSystem, error_number);
  }
  if (!facts.regular) return failure(OpenError::kNotRegular);
  if (!facts.ours) return failure(OpenError::kForeignOwner);
  {
    const std::lock_guard<std::mutex> guard(registry);
    if (Region* region = mapped_file(facts)) {
      if (size > region->user_bytes) return failure(OpenError::kTooSmall);
      region->uses.fetch_add(1, std::memory_order_relaxed);
      return opened_from(region);
    }
  }
  Opened header = read_header(caller_file, facts.bytes);
  if (header.error == OpenError::kUnfinished) {
    header = repair(caller_file, may_repair, size != 0 ? size : kDefaultBytes);
    if (header.region != nullptr) return header;
  }
  if (header.error != OpenError::kNone) return header;
  if (size > header.size) return failure(OpenError::kTooSmall);
  const os::FileHandle file = os::duplicate_file(caller_file, &error_number);
  if (file == os::kNoFile) return failure(OpenError::kSystem, error_number);
  OpenError error = OpenError::kNone;
  Region* region = map_file(file, facts, header.size, &error, &error_number);
  if (region == nullptr) {
    os::close_file(file);
    return failure(error, error_number);
  }
  region->identity = region->identity_in_file();
  return publish(region, /*created=*/false);
}

void retain(Region* region) noexcept {
  region->uses.fetch_add(1, std::memory_order_relaxed);
}

void release(Region* region) noexcept {
  {
    const std::lock_guard<std::mutex> guard(registry);
    if (region->uses.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    const Changing changing;
    remove_span(region);
  }
  // Nobody here uses it: this process's identities there end (closing the descriptor drops their
  // liveness locks too), unless the file is no longer the one mapped.
  if (whole_and_intact(*region)) {
    for (std::size_t slot = 0; slot < kSlots; ++slot) {
      if (region->local_thread[slot] != kNoThread) {
        region->state(slot).store(kEnded, std::memory_order_release);
      }
    }
  }
  unmap(region);
}

bool intact(const Region* region) noexcept {
  return file_intact(*region);
}

Region* region_at(const void* address) noexcept {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  for (;;) {
    const std::uint32_t before = changes.load(std::memory_order_acquire);
    if ((before & 1) == 0) {
      // The last span that begins at or before `at` is the only one that may hold it.
      std::size_t low = 0;
      std::size_t high = std::min(mapped_count.load(std::memory_order_relaxed), kMostRegions);
      while (low < high) {
        const std::size_t middle = low + (high - low) / 2;
        if (spans[middle].begin.load(std::memory_order_acquire) <= at) {
          low = middle + 1;
        } else {
          high = middle;
        }
      }
      Region* found = nullptr;
      if (low > 0 && at < spans[low - 1].end.load(std::memory_order_acquire)) {
        found = spans[low - 1].region.load(std::memory_order_acquire);
      }
      std::atomic_thread_fence(std::memory_order_acquire);
      if (changes.load(std::memory_order_relaxed) == before) return found;
    }
    // A region is being mapped or released: a few stores under `registry`.
    std::this_thread::yield();
  }
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
  return !alive_elsewhere(*region, slot);
}

std::size_t end_identities(ThreadId thread, ThreadId* out, std::size_t capacity) noexcept {
  std::size_t count = 0;
  // Under `registry`, so that no region is released while its slots are looked at.
  const std::lock_guard<std::mutex> registered(registry);
  const std::size_t regions = mapped_count.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < regions && count < capacity; ++i) {
    Region* region = spans[i].region.load(std::memory_order_relaxed);
    const std::lock_guard<std::mutex> guard(region->taking);
    for (std::size_t slot = 0; slot < kSlots; ++slot) {
      if (region->local_thread[slot] != thread) continue;
      region->local_thread[slot] = kNoThread;
      // Into a file truncated since, nothing more is written: it is the next opener's to judge.
      if (whole_and_intact(*region)) {
        region->state(slot).store(kEnded, std::memory_order_release);
      }
      give_up_liveness(*region, slot);
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

DoorbellPlace doorbell_place(const void* word) noexcept {
  Region* region = region_at(word);
  if (region == nullptr) return {};
  return {reinterpret_cast<std::uint32_t*>(region->base + kDoorbellOffset),
          reinterpret_cast<std::uint64_t*>(region->base + kRecentRingsOffset),
          reinterpret_cast<const std::uint8_t*>(region->user_begin()),
          region->base + kSleepersOffset,
          region->identity,
          &region->sleeper_events};
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
Opened create(const char*, unsigned, std::uint64_t) {
  Opened opened;
  opened.error = OpenError::kUnsupported;
  return opened;
}
Opened adopt(os::FileHandle, bool, std::uint64_t) {
  Opened opened;
  opened.error = OpenError::kUnsupported;
  return opened;
}
void retain(Region*) noexcept {}
void release(Region*) noexcept {}
bool intact(const Region*) noexcept {
  return true;
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
DoorbellPlace doorbell_place(const void*) noexcept {
  return {};
}
LedgerPlace ledger_place(const void*) noexcept {
  return {};
}

#endif

RegionUse RegionUse::of(const void* address) noexcept {
  return another(any_mapped() ? region_at(address) : nullptr);
}

RegionUse RegionUse::another(Region* region) noexcept {
  if (region != nullptr) retain(region);
  return RegionUse(region);
}

}  // namespace parklock::shared_region
