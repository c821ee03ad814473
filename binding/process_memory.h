// One block of zeroed memory per process, the same in every thread, that lives as long as the
// process: where lib/named_locks/ keeps the table of the process-wide lock manager (`locks`), which
// every thread reaches without anything being posted to it.
//
// The addon is pinned for the life of the process (process_anchor.h), so the block is never freed
// and an ArrayBuffer over it never points at released memory; a second copy of the addon is
// refused at load, so there is one block per process.
#pragma once

#include <cstddef>

namespace parklock::binding {

// The block's size: fixed, so that every thread lays out the same table in it.
constexpr std::size_t kProcessMemoryBytes = std::size_t{16} << 20;

// Whether [address, address + bytes) lies in the block (false before it is first made).
bool in_process_memory(const void* address, std::size_t bytes) noexcept;

}  // namespace parklock::binding
