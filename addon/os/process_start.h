// When a process started: with its pid, a name for the process that no later process given the
// same pid shares. The liveness of a region's identities where no lock the kernel drops at exit
// marks them (shared_region.h, Identities): macOS has no open-file-description locks.
#pragma once

#include <cstdint>

namespace parklock::os {

// A process that has ended or never was: pid `pid` names no running process (a zombie, ended but
// not yet reaped by its parent, has ended).
inline constexpr std::uint64_t kNoProcess = 0;
// The system would not tell (a process of another user, where that is hidden): taken for alive.
inline constexpr std::uint64_t kStartUnknown = ~std::uint64_t{0};

// The start of process `pid`, in the system's own units: the same for the process's whole life,
// and different for a later process with the same pid; or kNoProcess or kStartUnknown.
std::uint64_t process_start(std::int32_t pid) noexcept;

}  // namespace parklock::os
