#include "futex.h"

#include <atomic>

#include "atomic_ref.h"

namespace parklock::futex {

namespace {

bool holds(const std::int32_t* word, std::int32_t expected) {
  return atomic_ref<const std::int32_t>(*word).load(std::memory_order_seq_cst) == expected;
}

}  // namespace

WaitStatus wait(const std::int32_t* word, std::int32_t expected, Deadline deadline) {
  const ParkResult parked = parking_lot::park(
      key(word), [&] { return holds(word, expected); }, deadline);
  switch (parked.status) {
    case ParkResult::Status::kInvalid:
      return WaitStatus::kNotEqual;
    case ParkResult::Status::kTimedOut:
      return WaitStatus::kTimedOut;
    case ParkResult::Status::kInterrupted:
      return WaitStatus::kInterrupted;
    case ParkResult::Status::kUnparked:
      break;
  }
  if (parked.interrupted) {
    notify(word, 1);  // this thread is leaving: the notification goes to the next waiter
    return WaitStatus::kInterrupted;
  }
  return WaitStatus::kWoken;
}

bool enqueue_if_equal(const std::int32_t* word, std::int32_t expected, Waiter& waiter) {
  return parking_lot::enqueue(key(word), waiter, [&] { return holds(word, expected); });
}

std::size_t notify(const std::int32_t* word, std::size_t count) {
  return parking_lot::unpark_some(key(word), count, kNotified);
}

std::size_t queued_count(const std::int32_t* word) {
  return parking_lot::queued_count(key(word));
}

}  // namespace parklock::futex
