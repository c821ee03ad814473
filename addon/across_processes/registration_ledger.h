// The registration ledger of a region (shared_region.h): under which region identity each wait
// that a Condition word there counts (condition.h) registered, so that the waits of a process
// that died, or of a thread that ended, can be taken back out of the word.
//
// Layout (shared_region::kLedgerEntries entries of 8 bytes from shared_region::kLedgerOffset;
// each entry one 64-bit word, changed only by compare-and-swap; zero is a free entry):
//
//   bits    field     meaning
//   ------  --------  --------------------------------------------------------------------------
//   0..8    count     registrations of this identity in this word that its entry accounts for,
//                     0..kMostCount (an identity with more waits there takes more entries)
//   9       in use    always 1 in an entry that is not free
//   10..37  word      the condition word's place in the user area: its byte offset / 4
//   38..63  identity  the registering thread's region identity, without its kRegionIdentity bit
//
// The in-use bit, the word and the identity are the entry's key. An entry with a key and count 0
// is one whose owner is taking its last registration out of the word; the owner frees it once
// done (a claim that finds nothing to claim after all puts the registration back instead).
//
// Why a reclaimer never takes a living wait's registration. A registration goes into the word
// first and into an entry second; a departure (a claimed notification, a withdrawal) comes out of
// the entry first and out of the word second. So for every word and identity, the counts of the
// entries never exceed the registrations of that identity the word counts, and whoever takes the
// entries of an identity that ended and subtracts their counts from the word takes out only
// registrations of waits that will never claim or withdraw them. An entry changes only by CAS: a
// reclaimer takes it whole, to zero, and the owner's later step on it then finds its key gone and
// leaves the word alone, so no registration is subtracted twice; that covers a thread of a live
// process whose identity ended (shared_region::end_identities) while its waits still leave. A
// process killed between the two stores leaves the word counting one registration that no entry
// names, for the rest of the file's life: the other way round it would have let a reclaimer take
// a living wait's.
//
// Placement. An entry lives in its word's home window (kHomeWindow entries from a hash of the
// word's place) where there is room, else in any free entry, and one key may have several entries
// (their counts add up), so finding an entry never depends on another. A word whose home window
// accounts for every registration it counts has no entry elsewhere, so a look at its entries is
// usually a look at one window. A process changes the entries of its own identities on one word
// only under that word's bucket lock (parking_lot.h), so an entry it found stays as it left it
// until it frees it, unless a reclaimer takes it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "across_processes/shared_region.h"
#include "lot/function_ref.h"
#include "lot/thread_id.h"

namespace parklock::registration_ledger {

inline constexpr int kCountBits = 9;
inline constexpr std::uint64_t kMostCount = (std::uint64_t{1} << kCountBits) - 1;
inline constexpr std::uint64_t kInUse = std::uint64_t{1} << kCountBits;
inline constexpr int kWordShift = kCountBits + 1;
inline constexpr int kWordBits = 28;
inline constexpr int kIdentityShift = kWordShift + kWordBits;
inline constexpr int kIdentityBits = 64 - kIdentityShift;
inline constexpr std::size_t kHomeWindow = 16;

static_assert(shared_region::kLedgerEntryBytes == sizeof(std::uint64_t));
// Other processes change the same entries: no lock may hide inside the atomics.
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(shared_region::kMaxUserBytes / 4 <= (std::uint64_t{1} << kWordBits));
// A region identity is kRegionIdentity above a slot and a generation (shared_region.h).
static_assert(shared_region::kSlotBits + shared_region::kGenerationBits <= kIdentityBits);
static_assert(shared_region::kRegionIdentity >= (ThreadId{1} << kIdentityBits));

// The registrations of one region identity in one condition word of a region.
class Registrations {
 public:
  // `word` lies in a region, and `identity` is a region identity there.
  Registrations(const std::int32_t* word, ThreadId identity) noexcept;

  // Accounts for one more registration, which the word counts already. False: no entry is free.
  bool add() noexcept;
  // Takes one registration out of its entry, before the word gives it up; the entry stays this
  // owner's, even empty, until release(). False: a reclaimer took the entry (the identity ended)
  // and the registration out of the word with it.
  bool take_one() noexcept;
  // Puts back what take_one() took: the word keeps the registration after all. False: a
  // reclaimer took the entry meanwhile, without it, and the caller takes it out of the word.
  bool put_back() noexcept;
  // Frees the entry take_one() left if it is empty.
  void release() noexcept;

 private:
  static constexpr std::size_t kNowhere = ~std::size_t{0};

  std::uint64_t* entries_;  // null outside every region
  std::uint64_t key_ = 0;
  std::size_t at_ = kNowhere;  // the entry take_one() took from
};

enum class Scope {
  kThisWord,        // every entry of `word`
  kThisWordAtHome,  // the entries of `word` in its home window, and the others only if those
                    // account for fewer than the `counted` registrations the word counts
  kEveryWord,       // every entry of the region
};

// Takes the entries of identities that have ended, in `scope`, and calls forget(condition word,
// count) for each that still counted registrations. Costs a liveness check
// (shared_region::region_owner_ended) per entry in scope, a system call for another process's.
void take_ended(const std::int32_t* word, Scope scope, std::int32_t counted,
                FunctionRef<void(std::int32_t* word, std::int32_t count)> forget) noexcept;

}  // namespace parklock::registration_ledger
