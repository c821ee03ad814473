#include "lock_wait.h"

namespace parklock {

LockPark park_for_lock(const void* key, FunctionRef<bool()> validate,
                       const parking_lot::ParkOptions& options,
                       FunctionRef<bool()> held_by_this_thread,
                       FunctionRef<void(WakeToken)> abandon) {
  const Interrupt* outer = current_interrupt();
  bool stop_requested = false;
  const auto poll = [&] {
    stop_requested = outer->requested();
    return stop_requested || held_by_this_thread();
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
      return {false, stop_requested ? LockStatus::kInterrupted : LockStatus::kAlreadyHeld};
    case ParkResult::Status::kUnparked:
      break;
  }
  // Woken while the watch fired: only a real stop gives the wake-up away; a lock handed to this
  // very waiter (which is what the watch saw) is simply taken.
  if (parked.interrupted && stop_requested) {
    abandon(parked.token);
    return {false, LockStatus::kInterrupted};
  }
  return {false, std::nullopt, parked.token};
}

}  // namespace parklock
