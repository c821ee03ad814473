#include "primitives/latch.h"

#include <stdexcept>

#include "primitives/futex.h"

namespace parklock {

const WaitSite LatchWord::kWaitSite{"latch", &futex::word_of, nullptr, nullptr, &futex::look_again};

LatchWord::CountDownResult LatchWord::count_down(std::int32_t n) noexcept {
  std::int32_t seen = word().load(std::memory_order_relaxed);
  if (n < 1) return {CountDownStatus::kNotPositive, seen};
  for (;;) {
    if (seen < 0) return {CountDownStatus::kCorrupt, seen};
    if (n > seen) return {CountDownStatus::kExceedsCount, seen};
    if (word().compare_exchange_weak(seen, seen - n, std::memory_order_acq_rel,
                                     std::memory_order_relaxed)) {
      break;
    }
  }
  const std::int32_t left = seen - n;
  if (left > 0) return {CountDownStatus::kCounted, left};
  // The word is 0 before this notify, and stays 0: a waiter that parks after this point would
  // have to load a non-zero count first, which no longer exists.
  futex::notify(word_, std::numeric_limits<std::size_t>::max());
  return {CountDownStatus::kReleased, 0};
}

Outcome LatchWord::wait(Deadline deadline) const {
  AwaitStep step(*this);
  return wait_blocking(step, deadline);
}

std::optional<Outcome> LatchWord::AwaitStep::finished(std::int32_t count) const {
  if (count < 0) return Outcome::kCorrupt;
  if (count == 0) return Outcome::kAcquired;
  return std::nullopt;
}

Outcome LatchWord::AwaitStep::on_cancelled(Waiter& /*waiter*/) {
  return finished(value()).value_or(Outcome::kCancelled);
}

Latch::Latch(std::int32_t count) : word_(0) {
  if (count < 0) throw std::invalid_argument("parklock::Latch: the count must not be negative");
  word().init(count);
}

void Latch::count_down(std::int32_t n) {
  switch (word().count_down(n).status) {
    case LatchWord::CountDownStatus::kCounted:
    case LatchWord::CountDownStatus::kReleased:
      return;
    case LatchWord::CountDownStatus::kNotPositive:
      throw std::invalid_argument("parklock::Latch::count_down: n must be at least 1");
    case LatchWord::CountDownStatus::kExceedsCount:
      throw std::invalid_argument("parklock::Latch::count_down: n exceeds the count left");
    case LatchWord::CountDownStatus::kCorrupt:
      break;
  }
  throw std::logic_error("parklock::Latch: the count word is corrupt");
}

}  // namespace parklock
