#include "primitives/semaphore.h"

#include <optional>
#include <stdexcept>

#include "primitives/spin.h"

namespace parklock {

const WaitSite SemaphoreWord::kWaitSite{"semaphore", &key_is_address, nullptr, nullptr,
                                        &SemaphoreWord::look_again};

void SemaphoreWord::look_again(const void* address) noexcept {
  SemaphoreWord(const_cast<std::int32_t*>(static_cast<const std::int32_t*>(address)))
      .add_and_grant(0);
}

SemaphoreWord::Claim SemaphoreWord::take_or_announce(std::int32_t n, bool may_queue) noexcept {
  std::int32_t seen = word().load(std::memory_order_relaxed);
  for (;;) {
    if (is_corrupt(seen)) return Claim::kCorrupt;
    // Barging: free permits are anyone's, queued waiters or not, unless they are set aside for
    // the waiters (kHandOffBit).
    if (!hands_off(seen) && permits_of(seen) >= n) {
      if (word().compare_exchange_weak(seen, seen - n, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
        return Claim::kTaken;
      }
      continue;
    }
    if (!may_queue) return Claim::kWouldBlock;
    if (has_waiters(seen)) return Claim::kQueue;
    // From here on every release takes the slow path, which finds the caller (queued right after
    // this, under the same lock).
    if (word().compare_exchange_weak(seen, seen | kWaitersBit, std::memory_order_relaxed)) {
      return Claim::kQueue;
    }
  }
}

bool SemaphoreWord::take_for_waiter(std::int64_t request) noexcept {
  std::int32_t seen = word().load(std::memory_order_relaxed);
  while (!is_corrupt(seen) && permits_of(seen) >= request) {
    // Acquire: the waiter is woken through the lot after this, and must see what the releasers
    // of these permits wrote before releasing them.
    if (word().compare_exchange_weak(seen, seen - static_cast<std::int32_t>(request),
                                     std::memory_order_acquire, std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

SemaphoreWord::ReleaseStatus SemaphoreWord::add_and_grant(std::int32_t n) noexcept {
  ReleaseStatus status = ReleaseStatus::kReleased;
  with_grant_step(n, &status, [this](const parking_lot::Grant& grant) {
    parking_lot::unpark_filter(address(), grant);
  });
  return status;
}

void SemaphoreWord::with_grant_step(std::int32_t n, ReleaseStatus* result,
                                    FunctionRef<void(const parking_lot::Grant&)> run) noexcept {
  ReleaseStatus& status = *result;
  bool added = false;
  // The permits are added under the bucket lock, by whichever callback runs first (`grant` runs
  // only when a waiter is queued, `finish` always).
  auto add_once = [&] {
    if (added) return;
    added = true;
    std::int32_t seen = word().load(std::memory_order_relaxed);
    for (;;) {
      if (is_corrupt(seen)) {
        status = ReleaseStatus::kCorrupt;
        return;
      }
      if (permits_of(seen) > kMaxPermits - n) {
        status = ReleaseStatus::kOverflow;
        return;
      }
      // A CAS even though the bit is set: the fast paths take permits concurrently.
      if (n == 0 || word().compare_exchange_weak(seen, seen + n, std::memory_order_release,
                                                 std::memory_order_relaxed)) {
        return;
      }
    }
  };
  parking_lot::FairTurn turn{kCompete};
  bool first = true;
  bool handing_off = false;        // granting oldest first, the permits taken out of the word
  bool head_left_waiting = false;  // the walk ended at its first waiter
  std::int64_t budget = 0;         // what those woken to compete may take between them
  const auto grant = [&](std::int64_t request) -> std::optional<WakeToken> {
    add_once();
    if (status == ReleaseStatus::kCorrupt) return std::nullopt;
    const bool was_first = std::exchange(first, false);
    if (was_first) {
      const std::int32_t seen = word().load(std::memory_order_relaxed);
      handing_off = turn.be_fair || hands_off(seen);
      budget = permits_of(seen);
    }
    if (handing_off) {
      if (take_for_waiter(request)) return kGranted;
    } else if (budget >= request) {
      budget -= request;
      return kCompete;
    }
    head_left_waiting = was_first;
    return std::nullopt;
  };
  const auto finish = [&](bool queue_empty) {
    add_once();
    if (status == ReleaseStatus::kCorrupt) return;
    // Nobody queues without taking this lock and setting the bit first, so an empty queue stays
    // empty until the bit is clear; then releases take the fast path again.
    if (queue_empty) {
      word().fetch_and(~(kWaitersBit | kHandOffBit), std::memory_order_relaxed);
      return;
    }
    // A fair turn sets the permits aside for the oldest waiter left, and they stay set aside
    // until a release has served the waiter they were set aside for: so a large request at the
    // head is not starved by small ones beyond the fairness interval.
    if (handing_off && (turn.be_fair || head_left_waiting)) {
      word().fetch_or(kHandOffBit, std::memory_order_relaxed);
    } else {
      word().fetch_and(~kHandOffBit, std::memory_order_relaxed);
    }
  };
  const FunctionRef<std::optional<WakeToken>(std::int64_t)> offer = grant;
  run(parking_lot::Grant{&offer, finish, &turn});
}

Outcome SemaphoreWord::acquire_slow(std::int32_t n, Deadline deadline) {
  AcquireStep step(*this, n);
  return wait_blocking(step, deadline);
}

SemaphoreWord::ReleaseStatus SemaphoreWord::release_slow(std::int32_t n) noexcept {
  if (!valid_count(n)) return ReleaseStatus::kBadCount;
  std::int32_t seen = word().load(std::memory_order_relaxed);
  for (;;) {
    if (is_corrupt(seen)) return ReleaseStatus::kCorrupt;
    if (permits_of(seen) > kMaxPermits - n) return ReleaseStatus::kOverflow;
    if (has_waiters(seen)) break;
    if (word().compare_exchange_weak(seen, seen + n, std::memory_order_release,
                                     std::memory_order_relaxed)) {
      return ReleaseStatus::kReleased;
    }
  }
  return add_and_grant(n);
}

Outcome SemaphoreWord::acquire_or_enqueue(Waiter& waiter, Deadline deadline) {
  const std::int64_t request = waiter.request();
  if (!valid_count(request)) return Outcome::kCorrupt;
  // A blocking waiter spins briefly before it queues, as the mutex does (spin.h): a holder of the
  // permits is usually running and about to release them, and queueing sends every release down
  // the slow path until the queue is empty again. It spins only while nobody is queued: once the
  // waiters bit is set, each release wakes a queued waiter for what it frees, and a spinner would
  // only race that waiter and take the cores the holders need. It stops at its deadline, so a
  // timed acquire ends on time. A Promise wait never spins: its thread has its event loop to run.
  if (waiter.blocking() && !deadline.expired()) {
    const auto n = static_cast<std::int32_t>(request);
    const int limit = spin_policy().limit;
    for (int spins = 0; spins < limit; ++spins) {
      const std::int32_t seen = word().load(std::memory_order_relaxed);
      if (has_waiters(seen) || is_corrupt(seen) || deadline.expired()) break;
      if (try_acquire(n)) return Outcome::kAcquired;
      spin_pause(spins);
    }
  }
  Claim claim = Claim::kWouldBlock;
  const auto take_or_queue = [&] {
    // An expired deadline still takes free permits, but never queues.
    claim = take_or_announce(static_cast<std::int32_t>(request), !deadline.expired());
    return claim == Claim::kQueue;
  };
  if (parking_lot::enqueue(address(), waiter, take_or_queue, &kWaitSite)) return Outcome::kPending;
  switch (claim) {
    case Claim::kTaken:
      return Outcome::kAcquired;
    case Claim::kCorrupt:
      return Outcome::kCorrupt;
    case Claim::kWouldBlock:
    case Claim::kQueue:
      break;
  }
  return Outcome::kTimedOut;
}

Outcome SemaphoreWord::AcquireStep::start(Waiter& waiter) {
  return semaphore_.acquire_or_enqueue(waiter, deadline());
}

// A grant: the permits are this wait's; one whose deadline passed while the grant was on its way
// keeps them (the wait succeeded). Woken to compete: it takes the permits if they are still free
// (also past its deadline), or queues again at the back.
Outcome SemaphoreWord::AcquireStep::resume(Waiter& waiter, WakeToken token) {
  if (token == kGranted) return Outcome::kAcquired;
  return semaphore_.acquire_or_enqueue(waiter, deadline());
}

void SemaphoreWord::AcquireStep::abandon(Waiter& /*waiter*/, WakeToken token) noexcept {
  semaphore_.abandon_wake(n_, token);
}

bool SemaphoreWord::AcquireStep::cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept {
  return semaphore_.cancel(waiter, deferred);
}

void SemaphoreWord::abandon_wake(std::int64_t request, WakeToken token) noexcept {
  if (token == kCompete) {
    // The permits it was woken for are free: the next waiters may compete for them instead.
    if (waiters_queued()) add_and_grant(0);
    return;
  }
  if (token != kGranted || !valid_count(request)) return;
  // Cannot overflow unless someone released permits that were never acquired; those are lost.
  release(static_cast<std::int32_t>(request));
}

bool SemaphoreWord::cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept {
  bool removed = false;
  ReleaseStatus ignored = ReleaseStatus::kReleased;
  with_grant_step(0, &ignored, [&](const parking_lot::Grant& on_leave) {
    removed = parking_lot::cancel(
        waiter, [&](const void*) { return &on_leave; }, deferred);
  });
  return removed;
}

Semaphore::Semaphore(std::int32_t initial_permits) : word_(initial_permits) {
  if (initial_permits < 0 || initial_permits > SemaphoreWord::kMaxPermits) {
    throw std::invalid_argument("Semaphore: initial permits out of range");
  }
}

void Semaphore::acquire(std::int32_t n) {
  if (!SemaphoreWord::valid_count(n)) {
    throw std::invalid_argument("Semaphore::acquire: count out of range");
  }
  word().acquire(n);
}

void Semaphore::release(std::int32_t n) {
  switch (word().release(n)) {
    case SemaphoreWord::ReleaseStatus::kBadCount:
      throw std::invalid_argument("Semaphore::release: count out of range");
    case SemaphoreWord::ReleaseStatus::kOverflow:
      throw std::overflow_error("Semaphore::release: more than kMaxPermits permits");
    case SemaphoreWord::ReleaseStatus::kReleased:
    case SemaphoreWord::ReleaseStatus::kCorrupt:
      break;
  }
}

}  // namespace parklock
