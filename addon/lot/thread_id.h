// Process-wide thread identities, and which of them have ended.
//
// A mutex records its holder as a 32-bit ThreadId so that unlock can check ownership and a thread
// that locks a mutex it already holds is told so instead of hanging. The identity is assigned on a
// thread's first call and never reused within the process, so a stale owner word can never be
// mistaken for a live thread that happens to get the same number later — and so "the thread named
// in this word has ended" is a fact that never becomes false again. That is what lets a lock held
// by a thread that ended be found lazily, by whoever finds it taken, at no cost to the fast path.
#pragma once

#include <cstdint>

namespace parklock {

using ThreadId = std::int32_t;

// Never a real thread's identity: the owner word of an unlocked mutex.
inline constexpr ThreadId kNoThread = 0;

// The calling thread's identity: positive, stable for the thread's lifetime, unique in the process.
// A thread that has one ends through end_thread() when it exits (a Node environment ends it
// earlier, at its teardown, since its JavaScript can no longer release anything then).
ThreadId current_thread_id() noexcept;

// Whether `thread` has ended (a lock-free lookup: two loads). kNoThread never has.
bool thread_ended(ThreadId thread) noexcept;

// Records that `thread` has ended, then recovers what it still held for the waiters queued behind
// it (owner_death.h). Idempotent: only the first call does anything; true if this was it.
bool end_thread(ThreadId thread) noexcept;

}  // namespace parklock
