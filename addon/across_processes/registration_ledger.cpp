#include "across_processes/registration_ledger.h"

#include "lot/atomic_ref.h"

namespace parklock::registration_ledger {

namespace {

using shared_region::kLedgerEntries;

constexpr std::uint64_t kWordMask = (std::uint64_t{1} << kWordBits) - 1;
constexpr std::uint64_t kIdentityMask = (std::uint64_t{1} << kIdentityBits) - 1;

constexpr std::uint64_t key_of(std::uint64_t entry) noexcept {
  return entry & ~kMostCount;
}
constexpr std::uint64_t count_of(std::uint64_t entry) noexcept {
  return entry & kMostCount;
}
constexpr std::uint64_t word_index_of(std::uint64_t entry) noexcept {
  return (entry >> kWordShift) & kWordMask;
}
constexpr ThreadId identity_of(std::uint64_t entry) noexcept {
  return shared_region::kRegionIdentity | static_cast<ThreadId>(entry >> kIdentityShift);
}

std::uint64_t word_index(const shared_region::LedgerPlace& place, const std::int32_t* word) {
  return static_cast<std::uint64_t>(reinterpret_cast<const std::uint8_t*>(word) - place.user) / 4;
}

atomic_ref<std::uint64_t> entry(std::uint64_t* entries, std::size_t at) noexcept {
  return atomic_ref<std::uint64_t>(entries[at]);
}

// The first entry of the home window of the word an entry or a key names: a multiplicative hash
// of the word's place.
std::size_t home_of(std::uint64_t key) noexcept {
  return static_cast<std::size_t>((word_index_of(key) * 0x9e3779b97f4a7c15u) >> 32) %
         kLedgerEntries;
}

// The kHomeWindow entries from `home`, then (`everywhere`) every entry; `visit(at)` returns true
// to stop. True if it did.
template <typename Visit>
bool walk(std::size_t home, bool everywhere, Visit&& visit) {
  for (std::size_t i = 0; i < kHomeWindow; ++i) {
    if (visit((home + i) % kLedgerEntries)) return true;
  }
  if (!everywhere) return false;
  for (std::size_t at = 0; at < kLedgerEntries; ++at) {
    if (visit(at)) return true;
  }
  return false;
}

// Counts one registration more (`up`) or one fewer in the entry at `at`, while it holds `key`
// with room for the change.
bool count_one(std::uint64_t* entries, std::size_t at, std::uint64_t key, bool up) noexcept {
  std::uint64_t seen = entry(entries, at).load(std::memory_order_relaxed);
  for (;;) {
    if (key_of(seen) != key || count_of(seen) == (up ? kMostCount : 0)) return false;
    if (entry(entries, at)
            .compare_exchange_weak(seen, up ? seen + 1 : seen - 1, std::memory_order_seq_cst,
                                   std::memory_order_relaxed)) {
      return true;
    }
  }
}

}  // namespace

Registrations::Registrations(const std::int32_t* word, ThreadId identity) noexcept {
  const shared_region::LedgerPlace place = shared_region::ledger_place(word);
  entries_ = place.entries;
  if (entries_ == nullptr) return;
  key_ = ((static_cast<std::uint64_t>(identity) & kIdentityMask) << kIdentityShift) |
         (word_index(place, word) << kWordShift) | kInUse;
}

bool Registrations::add() noexcept {
  if (entries_ == nullptr) return false;
  std::size_t free = kNowhere;
  const auto join = [&](std::size_t at) {
    const std::uint64_t seen = entry(entries_, at).load(std::memory_order_relaxed);
    if (seen == 0 && free == kNowhere) free = at;
    return key_of(seen) == key_ && count_one(entries_, at, key_, /*up=*/true);
  };
  if (walk(home_of(key_), /*everywhere=*/false, join)) return true;
  const auto take_free = [this](std::size_t at) {
    std::uint64_t expected = 0;
    return entry(entries_, at)
        .compare_exchange_strong(expected, key_ | 1, std::memory_order_seq_cst);
  };
  if (free != kNowhere && take_free(free)) return true;
  return walk(home_of(key_), /*everywhere=*/true, take_free);
}

bool Registrations::take_one() noexcept {
  if (entries_ == nullptr) return false;
  const auto take = [this](std::size_t at) {
    if (!count_one(entries_, at, key_, /*up=*/false)) return false;
    at_ = at;
    return true;
  };
  return walk(home_of(key_), /*everywhere=*/true, take);
}

bool Registrations::put_back() noexcept {
  return at_ != kNowhere && count_one(entries_, at_, key_, /*up=*/true);
}

void Registrations::release() noexcept {
  if (at_ == kNowhere) return;
  std::uint64_t empty = key_;
  // A reclaimer may have freed it already, and an entry of another key filled it since.
  entry(entries_, at_).compare_exchange_strong(empty, 0, std::memory_order_seq_cst);
  at_ = kNowhere;
}

void take_ended(const std::int32_t* word, Scope scope, std::int32_t counted,
                FunctionRef<void(std::int32_t* word, std::int32_t count)> forget) noexcept {
  const shared_region::LedgerPlace place = shared_region::ledger_place(word);
  if (place.entries == nullptr) return;
  const std::uint64_t own = word_index(place, word);
  const auto concerns = [&](std::uint64_t seen) {
    return scope == Scope::kEveryWord || word_index_of(seen) == own;
  };
  // Takes the entry at `at` if it is in scope and its identity ended; its count, taken or not
  // (0 out of scope).
  const auto take = [&](std::size_t at) -> std::uint64_t {
    std::uint64_t seen = entry(place.entries, at).load(std::memory_order_relaxed);
    while (seen != 0 && concerns(seen)) {
      if (!shared_region::region_owner_ended(word, identity_of(seen))) return count_of(seen);
      if (!entry(place.entries, at)
               .compare_exchange_strong(seen, 0, std::memory_order_seq_cst,
                                        std::memory_order_relaxed)) {
        continue;  // its owner moved it, or another reclaimer took it: look again
      }
      const std::uint64_t offset = word_index_of(seen) * 4;
      // An entry names a word in the user area, unless other code wrote over the header.
      if (count_of(seen) != 0 && offset + 4 <= place.user_bytes) {
        forget(reinterpret_cast<std::int32_t*>(place.user + offset),
               static_cast<std::int32_t>(count_of(seen)));
      }
      return count_of(seen);
    }
    return 0;
  };
  if (scope == Scope::kThisWordAtHome) {
    // The word counts no registration beyond those its home window accounts for: nothing of
    // it lies elsewhere.
    std::uint64_t at_home = 0;
    const std::size_t home = home_of(own << kWordShift);
    walk(home, /*everywhere=*/false, [&](std::size_t at) {
      at_home += take(at);
      return false;
    });
    if (at_home >= static_cast<std::uint64_t>(counted)) return;
  }
  for (std::size_t at = 0; at < kLedgerEntries; ++at) take(at);
}

}  // namespace parklock::registration_ledger
