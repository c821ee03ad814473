#include "lot/thread_id.h"

#include <array>
#include <atomic>

#include "lot/owner_death.h"

namespace parklock {

namespace {

std::atomic<ThreadId> next_thread_id{1};

// The ended threads, one bit each, in pages allocated on first use and never freed: ids are
// handed out in order, so the pages in use are few and dense, and lookups need no lock.
constexpr int kPageShift = 16;  // ids per page: 65536 (8 KiB of bits)
constexpr std::size_t kPageWords = (std::size_t{1} << kPageShift) / 64;
constexpr std::size_t kPageCount = std::size_t{1} << (31 - kPageShift);

struct EndedPage {
  std::array<std::atomic<std::uint64_t>, kPageWords> bits{};
};

std::array<std::atomic<EndedPage*>, kPageCount> ended_pages{};

EndedPage& page_for(ThreadId thread) {
  std::atomic<EndedPage*>& slot = ended_pages[static_cast<std::uint32_t>(thread) >> kPageShift];
  EndedPage* page = slot.load(std::memory_order_acquire);
  if (page != nullptr) return *page;
  auto* fresh = new EndedPage();
  if (slot.compare_exchange_strong(page, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;  // another thread installed the page first
  return *page;
}

// Ends the thread when it exits, for threads no Node environment ended first.
struct Identity {
  ThreadId id = next_thread_id.fetch_add(1, std::memory_order_relaxed);
  ~Identity() { end_thread(id); }
};

}  // namespace

ThreadId current_thread_id() noexcept {
  thread_local const Identity identity;
  return identity.id;
}

bool thread_ended(ThreadId thread) noexcept {
  if (thread <= kNoThread) return false;
  const EndedPage* page =
      ended_pages[static_cast<std::uint32_t>(thread) >> kPageShift].load(std::memory_order_acquire);
  if (page == nullptr) return false;
  const std::uint32_t bit = static_cast<std::uint32_t>(thread) & ((1u << kPageShift) - 1);
  return (page->bits[bit / 64].load(std::memory_order_acquire) >> (bit % 64) & 1) != 0;
}

bool end_thread(ThreadId thread) noexcept {
  if (thread <= kNoThread) return false;
  const std::uint32_t bit = static_cast<std::uint32_t>(thread) & ((1u << kPageShift) - 1);
  const std::uint64_t mask = std::uint64_t{1} << (bit % 64);
  // Release: a thread that sees the bit also sees every write the ended thread made before it.
  if ((page_for(thread).bits[bit / 64].fetch_or(mask, std::memory_order_acq_rel) & mask) != 0) {
    return false;
  }
  recover_locks_of_ended_thread(thread);
  return true;
}

}  // namespace parklock
