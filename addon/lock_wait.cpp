#include "lock_wait.h"

namespace parklock {

LockPark park_for_lock(const void* key, FunctionRef<bool()> validate,
                       const parking_lot::ParkOptions& options, ThreadId self,
                       const LockIdentity& lock, Waiting waiting,
                       FunctionRef<void(WakeToken)> abandon) {
  const Interrupt* outer = current_interrupt();
  WaitsForWatch waits_for(self, lock);
  bool stop_requested = false;
  bool deadlock = false;
  const auto poll = [&] {
    stop_requested = outer->requested();
    if (stop_requested || lock.owner() == self) return true;
    deadlock = waiting == Waiting::kForTheLock && waits_for.poll();
    return deadlock;
  };
  const Interrupt watch{outer != nullptr ? outer->poll_interval : Clock::duration{}, poll};
  ParkResult parked;
  {
    const InterruptScope scope(outer != nullptr ? &watch : nullptr);
    parked = parking_lot::park(key, validate, options);
  }
  switch (parked.status) {
    case ParkResult::Status::kInvalid:
      return {true, std::nullopt};
    case ParkResult::Status::kTimedOut:
      return {false, LockStatus::kTimedOut};
    case ParkResult::Status::kInterrupted:
      if (stop_requested) return {false, LockStatus::kInterrupted};
      return {false, deadlock ? LockStatus::kDeadlock : LockStatus::kAlreadyHeld};
    case ParkResult::Status::kUnparked:
      break;
  }
  // Woken while the watch fired: only a real stop gives the wake-up away; a lock handed to this
  // very waiter (which is what the watch saw) is simply taken, and a deadlock seen in the same
  // instant is over, since this thread proceeds.
  if (deadlock) take_deadlock_cycle();
  if (parked.interrupted && stop_requested) {
    abandon(parked.token);
    return {false, LockStatus::kInterrupted};
  }
  return {false, std::nullopt, parked.token};
}

}  // namespace parklock
