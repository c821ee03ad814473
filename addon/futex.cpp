#include "futex.h"

#include <atomic>

#include "atomic_ref.h"

namespace parklock::futex {

namespace {

bool holds(const std::int32_t* word, std::int32_t expected) {
  return atomic_ref<const std::int32_t>(*word).load(std::memory_order_seq_cst) == expected;
}

}  // namespace

const void* word_of(const void* key) noexcept {
  return static_cast<const char*>(key) - 1;
}

const WaitSite kWaitSite{"futex", &word_of, nullptr, nullptr};

WaitStatus wait(const std::int32_t* word, std::int32_t expected, Deadline deadline,
                const WaitSite* site) {
  parking_lot::ParkOptions options;
  options.deadline = deadline;
  options.site = site;
  const ParkResult parked = parking_lot::park(
      key(word), [&] { return holds(word, expected); }, options);
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

bool enqueue_if_equal(const std::int32_t* word, std::int32_t expected, Waiter& waiter,
                      const WaitSite* site) {
  return parking_lot::enqueue(
      key(word), waiter, [&] { return holds(word, expected); }, site);
}

std::size_t notify(const std::int32_t* word, std::size_t count) {
  return parking_lot::unpark_some(key(word), count, kNotified);
}

std::size_t queued_count(const std::int32_t* word) {
  return parking_lot::queued_count(key(word));
}

}  // namespace parklock::futex
