// Process-wide thread identities.
//
// A mutex records its holder as a 32-bit ThreadId so that unlock can check ownership and a thread
// that locks a mutex it already holds is told so instead of hanging. The identity is assigned on a
// thread's first call and never reused within the process, so a stale owner word can never be
// mistaken for a live thread that happens to get the same number later.
#pragma once

#include <cstdint>

namespace parklock {

using ThreadId = std::int32_t;

// Never a real thread's identity: the owner word of an unlocked mutex.
inline constexpr ThreadId kNoThread = 0;

// The calling thread's identity: positive, stable for the thread's lifetime, unique in the process.
ThreadId current_thread_id() noexcept;

}  // namespace parklock
