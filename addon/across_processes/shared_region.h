// A region of memory that several processes share: a file that each of them maps (MAP_SHARED),
// at whatever address, and whose words hold primitives exactly as a SharedArrayBuffer's do.
//
// File layout (version 4; words in the machine's byte order):
//
//   offset  bytes          field
//   ------  -------------  ------------------------------------------------------------------------
//   0       4              magic kMagic: a file without it is unfinished (Creation, below)
//   4       4              layout version kVersion: a file of another version is refused
//   8       8              the user area's size in bytes; the file is kHeaderBytes plus that
//   16      8              the file's identity: a random non-zero number written at creation
//                          (Integrity, below)
//   24      4              the doorbell word (doorbell.h)
//   28      4              the mechanism of the processes that use the file (mechanism.h):
//                          kFutexWaitvMechanism or kDoorbellMechanism; an opener of the other
//                          is refused, since the two would not wake each other
//   32      8 * kRecentRings  the doorbell's latest rings (doorbell.h)
//   64      32 * kSlots    identity slots (below)
//   kLedgerOffset          the registration ledger: kLedgerEntries entries of 8 bytes, which
//                          name who holds the waits counted in the user area's Condition words
//                          (registration_ledger.h)
//   kSleepersOffset        the doorbell's sleepers: kSleeperEntries entries of 32 bytes, the first
//                          of which counts the entries ever used (doorbell.h)
//   kHeaderBytes           the user area: what sharedMemory() hands out, the words of primitives
//
// Creation. A region appears at its path finished: its creator makes an unnamed file in the
// directory (O_TMPFILE; a uniquely named one there where the file system has no unnamed files, or
// /proc is missing), sizes it, writes the header and only then links it at the path. link(2)
// refuses an existing name, so of two creators one wins and the other opens the winner's file; a
// creator killed at any point leaves nothing at the path (or, the named way, a stray temporary
// file beside it). On a file system without hard links the creator makes the file empty at the
// path (O_EXCL) and repairs it at once, as below. A file at the
// path without the magic was made otherwise: an earlier layout's creator that died, or a
// person's `: > file`. An opener that may create repairs it in place, never shorter, provided
// that the file is empty or holds nothing but zeros outside the version, size and identity fields
// (anything else is not ours to overwrite), while holding the file's init lock: an
// open-file-description lock on byte kInitLock, which the kernel drops if the repairer dies.
// Another opener that finds the lock taken looks again every millisecond, for at most kRepairWait.
//
// Integrity. Every process remembers the identity of the file it mapped, and the binding compares
// it, and the magic, with the header at each call that reaches the addon and as a wait ends
// (intact()). A file truncated under its users reads zeros where it was regrown (or raises SIGBUS
// beyond its end): its locks would all read "free" and its identity slots "unused". That is
// reported (ERR_PARKLOCK_REGION_LOST) rather than taken for a lock. JavaScript's fast paths, a
// lock or unlock that nobody contends, do not look: between two looks, a truncation can still
// let a second holder in.
//
// Lifetime in a process. adopt() and create() map a file once per process and return it with one
// use taken; each use is given back with release(): the binding's buffers as the garbage
// collector frees them, the relay as it stops watching a word (cross_process.h). The last release
// unmaps the region and closes its descriptor, which drops this process's liveness locks there,
// so that its identities read "ended" to every process; a later open maps the file anew.
//
// Identities. A lock word names its holder by a ThreadId, which counts a process's own threads,
// so two processes would name different threads alike. A word in a region names a region
// identity instead, of one slot:
//
//   ThreadId bits  28: kRegionIdentity   10..25: the slot's generation (low 16 bits)   0..9: slot
//
// A slot is { generation, pid, thread (its process's ThreadId), state, start (8 bytes: its
// process's start, os/process_start.h), 8 bytes of zeros }. A thread takes one the first time it
// needs an identity in the region. Liveness across processes is not the pid alone, which the
// system reuses. With futex_waitv (mechanism.h), while a slot is kLive its process holds an
// open-file-description lock (F_OFD_SETLK) on byte kLivenessBase + slot of the file, which the
// kernel drops when the process ends in any way, SIGKILL included, and which no later process
// inherits. With the doorbell, a kLive slot's process is alive while a process of its pid runs
// that started at its start (a zombie has ended). A slot whose thread ended (kEnded, written by
// its own process) or whose process has ended is free to take again, with its generation
// bumped, so that a word naming the old identity reads "owner ended" from then on (until the
// generation wraps: 65536 reuses of one slot while a word still names the first).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "lot/thread_id.h"
#include "os/region_file.h"

namespace parklock::os {
class SleeperEvents;
}

namespace parklock::shared_region {

inline constexpr std::uint32_t kMagic = 0x4b4c4b50;  // "PKLK"
inline constexpr std::uint32_t kVersion = 4;
inline constexpr std::size_t kIdentityOffset = 16;
inline constexpr std::size_t kDoorbellOffset = 24;
inline constexpr std::size_t kMechanismOffset = 28;
inline constexpr std::uint32_t kFutexWaitvMechanism = 0;
inline constexpr std::uint32_t kDoorbellMechanism = 1;
inline constexpr std::size_t kRecentRingsOffset = 32;
inline constexpr std::size_t kRecentRings = 4;
static_assert(kRecentRingsOffset + kRecentRings * 8 == 64);
inline constexpr std::size_t kSlotsOffset = 64;
inline constexpr std::size_t kSlotBytes = 32;
inline constexpr std::size_t kSlots = 1022;
inline constexpr std::size_t kLedgerOffset = 32768;
static_assert(kSlotsOffset + kSlots * kSlotBytes == kLedgerOffset);
inline constexpr std::size_t kLedgerEntryBytes = 8;
inline constexpr std::size_t kLedgerEntries = 4096;
inline constexpr std::size_t kSleepersOffset = kLedgerOffset + kLedgerEntries * kLedgerEntryBytes;
inline constexpr std::size_t kSleeperBytes = 32;
inline constexpr std::size_t kSleeperEntries = 512;
inline constexpr std::size_t kHeaderBytes = kSleepersOffset + kSleeperEntries * kSleeperBytes;
// The user area starts at a multiple of 16 KiB: a page boundary for 4 and 16 KiB pages.
static_assert(kHeaderBytes % 16384 == 0);
// Region sizes users may ask for: up to 1 GiB of words.
inline constexpr std::uint64_t kMaxUserBytes = std::uint64_t{1} << 30;

inline constexpr int kSlotBits = 10;
inline constexpr int kGenerationBits = 16;
inline constexpr ThreadId kRegionIdentity = ThreadId{1} << 28;
static_assert(kSlots <= (std::size_t{1} << kSlotBits));
static_assert(kSlotBits + kGenerationBits < 28);

// Whether `thread` is a region identity rather than a process's own ThreadId (which stay below
// kRegionIdentity: a process would have to start 2^28 threads to reach it).
constexpr bool is_region_identity(ThreadId thread) noexcept {
  return (thread & kRegionIdentity) != 0;
}

enum SlotState : std::uint32_t { kFree = 0, kLive = 1, kEnded = 2, kClaiming = 3 };

// The byte of the file whose lock says that a slot's process is alive.
inline constexpr std::int64_t kLivenessBase = std::int64_t{1} << 30;
// The byte whose lock a repairer of an unfinished file holds (Creation, above); past every slot's.
inline constexpr std::int64_t kInitLock = kLivenessBase + (std::int64_t{1} << kSlotBits);
inline constexpr std::chrono::milliseconds kRepairWait{250};
// How many regions one process may have mapped at once.
inline constexpr std::size_t kMostRegions = 16384;

// What opening a region can find wrong; each becomes a JavaScript error with its own code.
enum class OpenError {
  kNone,
  kUnsupported,   // no cross-process waits on this platform
  kSystem,        // a system call failed: `error_number` says which errno
  kNotRegular,    // a directory, a device, a fifo...
  kForeignOwner,  // the file belongs to another user
  kTooSmall,      // shorter than its header says, or than the size asked for
  kNotARegion,    // no magic, and more than an unfinished region's zeros: not a parklock file
  kUnfinished,    // no magic: a creator died before finishing, and the caller may not repair it
  kBusy,          // another process has been repairing it for longer than kRepairWait
  kExists,        // create(): the path exists already; open it instead
  kVersion,       // another layout version
  kMechanism,     // used by processes of the other mechanism (mechanism.h)
  kTooMany,       // the process has kMostRegions mapped
};

struct Region;

struct Opened {
  Region* region = nullptr;  // mapped, with one use taken for the caller (release())
  std::int32_t* words = nullptr;
  std::uint64_t size = 0;  // user bytes
  OpenError error = OpenError::kNone;
  int error_number = 0;             // with kSystem
  std::uint32_t found_version = 0;  // with kVersion; with kMechanism, the file's mechanism
  bool created = false;             // this call made the file a region (created or repaired it)
};

// Whether this platform has regions at all.
bool supported() noexcept;

// Creates the region file `path` (mode `mode`, less the umask) of `size` user bytes and maps it;
// kExists if the path exists, whatever it is.
Opened create(const char* path, unsigned mode, std::uint64_t size);

// Maps the region of the open file `file` (which the caller keeps and may close: the region keeps
// a duplicate, which carries this process's liveness locks). It must be a region of at least
// `size` user bytes (0: any size); an unfinished one is repaired into a region of `size` bytes
// (kDefaultBytes if 0) where `may_repair`, else refused (kUnfinished). A file this process has
// mapped already is not mapped again: the result is the same region, with one more use.
Opened adopt(os::FileHandle file, bool may_repair, std::uint64_t size);
inline constexpr std::uint64_t kDefaultBytes = 4096;

// One more use of `region`, by a caller that holds one already.
void retain(Region* region) noexcept;
// Gives back one use; the last unmaps the region (Lifetime in a process, above).
void release(Region* region) noexcept;

// Whether the region's file still holds the header this process mapped (Integrity, above).
bool intact(const Region* region) noexcept;

// A use of a region (or of none), given back when it goes.
class RegionUse {
 public:
  RegionUse() noexcept = default;
  // A use of the region holding `address`, if any; the caller must keep that region in use while
  // it asks (it holds a use itself, or a waiter it can see queued on the address does).
  static RegionUse of(const void* address) noexcept;
  // One more use of `region` (or none, for null), whose use the caller holds.
  static RegionUse another(Region* region) noexcept;
  RegionUse(RegionUse&& other) noexcept : region_(std::exchange(other.region_, nullptr)) {}
  RegionUse& operator=(RegionUse&& other) noexcept {
    std::swap(region_, other.region_);
    return *this;
  }
  RegionUse(const RegionUse&) = delete;
  RegionUse& operator=(const RegionUse&) = delete;
  ~RegionUse() {
    if (region_ != nullptr) release(region_);
  }
  Region* get() const noexcept { return region_; }

 private:
  explicit RegionUse(Region* region) noexcept : region_(region) {}
  Region* region_ = nullptr;
};

// The region whose user area holds `address`, or null: a lock-free walk over the regions mapped,
// and one relaxed load when there are none. Its caller holds a use of that region, if any (it is
// waiting on, or operating on, memory there), so the region stays mapped while it looks at it.
Region* region_at(const void* address) noexcept;

namespace detail {
// How many regions this process has mapped now; always 0 where regions are not supported. Inline,
// so that every parking-lot operation outside regions pays one relaxed load.
inline std::atomic<std::size_t> mapped_count{0};
}  // namespace detail

// Whether any region is mapped at all.
inline bool any_mapped() noexcept {
  return detail::mapped_count.load(std::memory_order_relaxed) != 0;
}

// `thread`'s identity in the region holding `word` (taking a slot the first time), `thread`
// itself for a word outside every region, or kNoThread when every slot is live.
ThreadId identity_in_region(const void* word, ThreadId thread) noexcept;
inline ThreadId identity_at(const void* word, ThreadId thread) noexcept {
  return any_mapped() ? identity_in_region(word, thread) : thread;
}

// Whether the holder `owner` of the word at `word` has ended: a region identity of a word in a
// region is looked up in the region's slots; anything else is a thread of this process
// (thread_id.h), whatever its bits, as a word outside every region names only those.
bool region_owner_ended(const void* word, ThreadId owner) noexcept;
inline bool owner_ended(const void* word, ThreadId owner) noexcept {
  return is_region_identity(owner) ? region_owner_ended(word, owner) : thread_ended(owner);
}

// Marks every region identity of this process's `thread` ended (its liveness lock released) and
// returns them through `visit`, so that the locks they hold can be recovered for local waiters.
template <typename Visit>
void end_identities_of(ThreadId thread, Visit&& visit);

// Who a region identity is, for diagnostics: its process and that process's ThreadId, or
// pid 0 when the slot has been taken again (the identity ended long ago); `here`: the same
// thread's ThreadId when it is a live thread of this process, else kNoThread.
struct IdentityInfo {
  std::int32_t pid = 0;
  ThreadId thread = kNoThread;
  ThreadId here = kNoThread;
};
IdentityInfo describe(const void* word, ThreadId identity) noexcept;

// The out-of-line half of end_identities_of(): up to `capacity` identities ended and written to
// `out`.
std::size_t end_identities(ThreadId thread, ThreadId* out, std::size_t capacity) noexcept;

template <typename Visit>
void end_identities_of(ThreadId thread, Visit&& visit) {
  if (!any_mapped()) return;
  constexpr std::size_t kBatch = 64;
  ThreadId ended[kBatch];
  // Each batch ends the identities it returns, so the next finds the rest.
  for (;;) {
    const std::size_t count = end_identities(thread, ended, kBatch);
    for (std::size_t i = 0; i < count; ++i) visit(ended[i]);
    if (count < kBatch) return;
  }
}

// --- The doorbell (doorbell.h documents it) ---

// The doorbell of the region holding `word`: its count of rings, its latest rings, the user area
// whose word indices they name, its sleepers, and what names their events (the file's identity)
// and keeps them open here. All null outside every region.
struct DoorbellPlace {
  std::uint32_t* rings = nullptr;
  std::uint64_t* recent = nullptr;  // kRecentRings of them
  const std::uint8_t* user = nullptr;
  std::uint8_t* sleepers = nullptr;  // kSleeperEntries entries of kSleeperBytes
  std::uint64_t file_identity = 0;
  os::SleeperEvents* events = nullptr;
};
DoorbellPlace doorbell_place(const void* word) noexcept;

// --- The registration ledger (registration_ledger.h documents its entries) ---

// Where the ledger of the region holding `word` lies: its entries, and the user area whose word
// offsets they name. All null outside every region.
struct LedgerPlace {
  std::uint64_t* entries = nullptr;  // kLedgerEntries of them
  std::uint8_t* user = nullptr;
  std::uint64_t user_bytes = 0;
};
LedgerPlace ledger_place(const void* word) noexcept;

}  // namespace parklock::shared_region
