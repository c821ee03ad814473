#include "primitives/futex.h"

#include <atomic>
#include <limits>

#include "lot/atomic_ref.h"

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

Outcome AwaitStep::start(Waiter& waiter) {
  return enqueue_if_equal(word_, expected_, waiter) ? Outcome::kPending : Outcome::kNotEqual;
}

void AwaitStep::abandon(Waiter& /*waiter*/, WakeToken /*token*/) noexcept {
  notify(word_, 1);
}

Outcome ChangeStep::look(Waiter& waiter) {
  for (;;) {
    const std::int32_t seen = value();
    if (const std::optional<Outcome> outcome = finished(seen)) return *outcome;
    if (enqueue_if_equal(word_, seen, waiter, site_)) return Outcome::kPending;
  }
}

std::int32_t ChangeStep::value() const noexcept {
  return atomic_ref<const std::int32_t>(*word_).load(std::memory_order_acquire);
}

void ChangeStep::abandon(Waiter& /*waiter*/, WakeToken /*token*/) noexcept {
  notify(word_, 1);
}

Outcome wait(const std::int32_t* word, std::int32_t expected, Deadline deadline) {
  AwaitStep step(word, expected);
  return wait_blocking(step, deadline);
}

bool enqueue_if_equal(const std::int32_t* word, std::int32_t expected, Waiter& waiter,
                      const WaitSite* site) {
  return parking_lot::enqueue(
      key(word), waiter, [&] { return holds(word, expected); }, site);
}

void look_again(const void* key) noexcept {
  parking_lot::unpark_some(key, std::numeric_limits<std::size_t>::max(), kNotified);
}

std::size_t notify(const std::int32_t* word, std::size_t count) {
  return parking_lot::unpark_some(key(word), count, kNotified);
}

std::size_t queued_count(const std::int32_t* word) {
  return parking_lot::queued_count(key(word));
}

}  // namespace parklock::futex
