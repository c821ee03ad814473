// What happens to a lock whose owner's thread ends while holding it.
//
// Locks that record their owner (the mutex, the write side of the RWLock) are never left held by
// a thread that has ended, and never silently freed either: the next thread to acquire gets the
// lock together with the news that its previous owner ended while holding it (the data it
// guards may be half-updated), much like a robust pthread mutex's EOWNERDEAD.
//
// Two ways lead there, and they meet in one compare-and-swap on the owner field, so exactly one
// thread takes over:
//   - Lazily: a thread that finds the lock taken (only ever on its slow path) checks whether the
//     owner has ended (thread_ended(), a lock-free lookup) and if so takes the lock over. The
//     uncontended fast path does nothing extra.
//   - At the end of a thread (end_thread()): waiters already queued behind it would otherwise
//     sleep on. recover_locks_of_ended_thread() visits every address with waiters whose
//     primitive can recover (WaitSite::recover, parking_lot::for_each_recoverable) and lets it hand
//     the lock to its oldest waiter, with a wake-up token that carries the ended owner.
#pragma once

#include "lot/parking_lot.h"
#include "lot/thread_id.h"

namespace parklock {

// Wake-up tokens of a lock hand-off may carry the ThreadId of an owner that ended, above the
// primitive's own token values (which stay below 1 << kEndedOwnerShift).
inline constexpr int kEndedOwnerShift = 8;

constexpr WakeToken with_ended_owner(WakeToken token, ThreadId ended) noexcept {
  return token | (static_cast<WakeToken>(ended) << kEndedOwnerShift);
}
// The primitive's own token, without the ended owner.
constexpr WakeToken grant_of(WakeToken token) noexcept {
  return token & ((WakeToken{1} << kEndedOwnerShift) - 1);
}
// The ended owner a token reports, or kNoThread.
constexpr ThreadId ended_owner_of(WakeToken token) noexcept {
  return static_cast<ThreadId>(token >> kEndedOwnerShift);
}

// Called by end_thread() once per ended thread.
void recover_locks_of_ended_thread(ThreadId ended) noexcept;

}  // namespace parklock
