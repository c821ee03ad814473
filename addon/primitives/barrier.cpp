#include "primitives/barrier.h"

#include <limits>
#include <stdexcept>

#include "primitives/futex.h"

namespace parklock {

const WaitSite BarrierWord::kWaitSite{"barrier", &futex::word_of, nullptr, nullptr,
                                      &futex::look_again};

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

Outcome BarrierWord::arrive_and_wait(Deadline deadline) {
  ArriveStep step(*this);
  return wait_blocking(step, deadline);
}

Outcome BarrierWord::ArriveStep::start(Waiter& waiter) {
  const Arrival arrival = barrier_.arrive();
  switch (arrival.status) {
    case ArriveStatus::kLast:
      return Outcome::kLeader;
    case ArriveStatus::kJoined:
      generation_ = arrival.generation;
      return look(waiter);
    case ArriveStatus::kUninitialized:
    case ArriveStatus::kCorrupt:
      break;
  }
  return Outcome::kCorrupt;
}

std::optional<Outcome> BarrierWord::ArriveStep::finished(std::int32_t state) const {
  if (generation_of(state) != generation_) return Outcome::kAcquired;
  return std::nullopt;
}

Outcome BarrierWord::ArriveStep::on_cancelled(Waiter& /*waiter*/) {
  return barrier_.leave(generation_) ? Outcome::kCancelled : Outcome::kAcquired;
}

Barrier::Barrier(std::int32_t parties) {
  if (!BarrierWord::valid_parties(parties)) {
    throw std::invalid_argument("parklock::Barrier: parties must be from 1 to 65535");
  }
  word().init(parties);
}

std::optional<bool> Barrier::wait_until(Deadline deadline) {
  const Outcome outcome = word().arrive_and_wait(deadline);
  if (outcome == Outcome::kLeader) return true;
  if (outcome == Outcome::kAcquired) return false;
  if (outcome == Outcome::kTimedOut) return std::nullopt;
  // Not kInterrupted: this thread has no interrupt of ours.
  throw std::logic_error("parklock::Barrier: the barrier words are corrupt");
}

}  // namespace parklock
