#include "barrier.h"

#include <limits>
#include <stdexcept>

#include "futex.h"

namespace parklock {

const WaitSite BarrierWord::kWaitSite{"barrier", &futex::word_of, nullptr, nullptr};

BarrierWord::Arrival BarrierWord::arrive() noexcept {
  const std::int32_t parties = this->parties();
  if (parties == 0) return {ArriveStatus::kUninitialized, 0};
  if (!valid_parties(parties)) return {ArriveStatus::kCorrupt, 0};
  std::int32_t seen = state().load(std::memory_order_relaxed);
  for (;;) {
    const std::int32_t arrived = arrived_of(seen);
    if (arrived >= parties) return {ArriveStatus::kCorrupt, generation_of(seen)};
    const bool last = arrived + 1 == parties;
    const std::int32_t next = last ? next_generation(seen) : seen + 1;
    if (state().compare_exchange_weak(seen, next, std::memory_order_acq_rel,
                                      std::memory_order_relaxed)) {
      if (last) futex::notify(address(), std::numeric_limits<std::size_t>::max());
      return {last ? ArriveStatus::kLast : ArriveStatus::kJoined, generation_of(seen)};
    }
  }
}

BarrierWord::WaitStatus BarrierWord::wait_for_generation(Generation generation,
                                                         Deadline deadline) const {
  for (;;) {
    const std::int32_t seen = state_value();
    if (generation_of(seen) != generation) return WaitStatus::kPassed;
    switch (futex::wait(address(), seen, deadline, &kWaitSite)) {
      case futex::WaitStatus::kWoken:
      case futex::WaitStatus::kNotEqual:
        continue;  // completed, or someone else arrived or left: the load decides
      case futex::WaitStatus::kTimedOut:
        if (generation_of(state_value()) != generation) return WaitStatus::kPassed;
        return WaitStatus::kTimedOut;
      case futex::WaitStatus::kInterrupted:
        return WaitStatus::kInterrupted;
    }
  }
}

bool BarrierWord::leave(Generation generation) noexcept {
  // Acquire: finding the generation completed means passing the barrier, which must make the
  // other parties' writes visible just as a woken waiter's load does.
  std::int32_t seen = state().load(std::memory_order_acquire);
  for (;;) {
    // Another generation: ours completed. Arrived 0 in ours: it can only be a later generation
    // with the same number (see Limits in the header), so ours completed too.
    if (generation_of(seen) != generation || arrived_of(seen) == 0) return false;
    if (state().compare_exchange_weak(seen, seen - 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
      return true;
    }
  }
}

BarrierWord::Outcome BarrierWord::arrive_and_wait(Deadline deadline) {
  const Arrival arrival = arrive();
  switch (arrival.status) {
    case ArriveStatus::kLast:
      return Outcome::kLeader;
    case ArriveStatus::kUninitialized:
      return Outcome::kUninitialized;
    case ArriveStatus::kCorrupt:
      return Outcome::kCorrupt;
    case ArriveStatus::kJoined:
      break;
  }
  switch (wait_for_generation(arrival.generation, deadline)) {
    case WaitStatus::kPassed:
      return Outcome::kPassed;
    case WaitStatus::kInterrupted:
      return Outcome::kInterrupted;  // the arrival stands (see the header)
    case WaitStatus::kTimedOut:
      break;
  }
  return leave(arrival.generation) ? Outcome::kTimedOut : Outcome::kPassed;
}

Barrier::Barrier(std::int32_t parties) {
  if (!BarrierWord::valid_parties(parties)) {
    throw std::invalid_argument("parklock::Barrier: parties must be from 1 to 65535");
  }
  word().init(parties);
}

std::optional<bool> Barrier::wait_until(Deadline deadline) {
  switch (word().arrive_and_wait(deadline)) {
    case BarrierWord::Outcome::kLeader:
      return true;
    case BarrierWord::Outcome::kPassed:
      return false;
    case BarrierWord::Outcome::kTimedOut:
      return std::nullopt;
    case BarrierWord::Outcome::kInterrupted:  // this thread has no interrupt of ours
    case BarrierWord::Outcome::kUninitialized:
    case BarrierWord::Outcome::kCorrupt:
      break;
  }
  throw std::logic_error("parklock::Barrier: the barrier words are corrupt");
}

}  // namespace parklock
