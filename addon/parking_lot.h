// The parking lot: process-wide FIFO queues of waiters keyed by memory address.
//
// A primitive keeps all of its state in a few words of (shared) memory and comes here only when a
// thread must wait. The lot hashes the address to one of a fixed number of buckets; each bucket has
// its own lock and one intrusive FIFO list holding the waiters of every address that hashes to it,
// so unrelated primitives rarely share a lock and the per-address order is the arrival order.
//
// Contract
// - enqueue()/park() run `validate` with the bucket lock held and enqueue only if it returns true.
//   A waker changes the word and then takes the same bucket lock to dequeue, so a waiter that saw
//   the old value is already queued when the waker looks: no wake-up is lost.
// - unpark_one() runs `decide` with the bucket lock held, after removing the waiter (if any) and
//   before waking it. That is where a primitive updates its word knowing exactly whether more
//   waiters remain, and chooses the token the woken waiter receives (for example "the lock is now
//   yours" versus "the lock is free, compete for it").
// - Wake-ups are delivered after the bucket lock is released: Waiter::on_unparked never runs with
//   a bucket lock held, so it may take other locks or call back into the lot.
// - cancel() removes a waiter that is still queued and returns true; it returns false once a waker
//   has dequeued it, in which case the wake-up (and its token) is still delivered. A timed-out or
//   cancelled waiter therefore never swallows a wake-up: it either left the queue before any waker
//   chose it, or it receives the token and must act on it (see Mutex::abandon_wake).
// - A waiter's memory must stay valid from enqueue until cancel() returns true or on_unparked has
//   been called.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "deadline.h"
#include "function_ref.h"
#include "thread_id.h"

namespace parklock {

// What a waker hands to the waiter it dequeued; its meaning belongs to the primitive.
using WakeToken = std::intptr_t;

// How a primitive whose lock records its owner hands the lock at `address` on when the thread
// `ended` has ended holding it (owner_death.h). Waiters of such a primitive name it, so that the
// end of a thread can find the queues that may be waiting for it. Runs with no bucket lock held.
using OwnerRecovery = void (*)(const void* address, ThreadId ended) noexcept;

class Waiter {
 public:
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;

  // The address it is queued on (requeue() may move it); changes only under the bucket locks.
  const void* address() const noexcept { return address_.load(std::memory_order_relaxed); }
  ThreadId thread() const noexcept { return thread_; }
  // When this waiter started waiting for what it waits for; re-parking keeps it, so fairness
  // policies see the whole wait, not just the latest stretch of it.
  Clock::time_point waiting_since() const noexcept { return since_; }
  // What the waiter asks for, in the primitive's terms (permits, shared or exclusive, ...).
  std::int64_t request() const noexcept { return request_; }
  // What recovers the lock it waits for if that lock's owner ends (may be null); changes only
  // under the bucket locks.
  OwnerRecovery recovery() const noexcept { return recovery_; }

 protected:
  Waiter(ThreadId thread, Clock::time_point since, std::int64_t request = 0) noexcept
      : thread_(thread), since_(since), request_(request) {}
  virtual ~Waiter() = default;

  // Called exactly once per dequeue by a waker, on the waker's thread, with no bucket lock held.
  virtual void on_unparked(WakeToken token) noexcept = 0;

 private:
  friend class ParkingLotAccess;

  std::atomic<const void*> address_{nullptr};
  Waiter* next_ = nullptr;  // guarded by the bucket lock
  Waiter* prev_ = nullptr;  // guarded by the bucket lock
  bool queued_ = false;     // guarded by the bucket lock
  ThreadId thread_;
  Clock::time_point since_;
  std::int64_t request_;
  OwnerRecovery recovery_ = nullptr;  // guarded by the bucket lock
};

// What unpark_one found, as seen by `decide` under the bucket lock.
struct UnparkInfo {
  bool unparked = false;        // a waiter was dequeued
  bool has_more = false;        // other waiters for the same address remain queued
  ThreadId thread = kNoThread;  // the dequeued waiter's thread
  Clock::duration waited{};     // how long it has been waiting (since waiting_since())
};

// A way for a blocked thread to be asked to give up (a worker being terminated): `requested` is
// polled every `poll_interval` while parked, outside any lock. `requested` refers to a callable
// that must outlive the Interrupt: name the lambda, then build the Interrupt from it.
struct Interrupt {
  Clock::duration poll_interval;
  FunctionRef<bool()> requested;
};

struct ParkResult {
  enum class Status { kUnparked, kInvalid, kTimedOut, kInterrupted };
  Status status;
  WakeToken token = 0;  // meaningful when status is kUnparked
  // An interrupt was requested, but a waker had already dequeued this waiter, so it was unparked
  // anyway: the caller must pass the token on before giving up. Also set when the interrupt is
  // found requested right after an ordinary wake-up (the interrupt is polled once more then), so
  // a thread being stopped never keeps what it was handed in its last instant.
  bool interrupted = false;
};

namespace parking_lot {

// How a thread parks; only `validate` and `deadline` are always needed.
struct ParkOptions {
  Deadline deadline = Deadline::never();
  const Interrupt* interrupt = nullptr;
  // When the caller began waiting (for fairness); defaults to now.
  Clock::time_point since = Clock::now();
  // Runs after the waiter is queued and the bucket lock released, before sleeping: a condition
  // variable releases its mutex here, so that a notifier which takes that mutex finds it queued.
  const FunctionRef<void()>* before_sleep = nullptr;
  // What the waiter asks for (Waiter::request()).
  std::int64_t request = 0;
  // Waiter::recovery().
  OwnerRecovery recovery = nullptr;
};

// Blocks the calling thread on `address` if `validate()` holds, until unparked, the deadline, or an
// interrupt. A waiter that requeue() moved to another address has been notified: from then on the
// deadline no longer applies (it waits for its turn on the new address).
ParkResult park(const void* address, FunctionRef<bool()> validate, const ParkOptions& options);
inline ParkResult park(const void* address, FunctionRef<bool()> validate, Deadline deadline,
                       const Interrupt* interrupt = nullptr,
                       Clock::time_point since = Clock::now()) {
  ParkOptions options;
  options.deadline = deadline;
  options.interrupt = interrupt;
  options.since = since;
  return park(address, validate, options);
}

// Queues a waiter whose wake-up is a callback (an asynchronous wait) if `validate()` holds;
// `recovery` is what it names as its Waiter::recovery() while queued there.
bool enqueue(const void* address, Waiter& waiter, FunctionRef<bool()> validate,
             OwnerRecovery recovery = nullptr);

// Removes a queued waiter; false if a waker already took it (its wake-up is on the way).
bool cancel(Waiter& waiter);

// Dequeues the longest-waiting waiter for `address`, runs `decide` under the bucket lock (also when
// nobody is queued, with info.unparked false) and wakes the waiter with the token it returns.
UnparkInfo unpark_one(const void* address, FunctionRef<WakeToken(const UnparkInfo&)> decide);

// Wakes up to `count` waiters for `address` in FIFO order, each with `token`; returns how many.
std::size_t unpark_some(const void* address, std::size_t count, WakeToken token);

// Offers the waiters of `address`, oldest first, to `grant(request)` under the bucket lock; each
// one it grants (returns a token for) is dequeued and woken with that token; the first it refuses
// (returns nothing) ends the walk, so grants are strictly FIFO. `finish(queue_empty)` then runs
// under the same lock: the primitive records there whether waiters remain. Returns how many woke.
std::size_t unpark_granted(const void* address,
                           FunctionRef<std::optional<WakeToken>(std::int64_t request)> grant,
                           FunctionRef<void(bool queue_empty)> finish);

// What requeue() should do, decided under both bucket locks from how many wait on `from`.
struct RequeueDecision {
  bool move = false;                 // move the movable waiters to `to` rather than waking them
  WakeToken token = 0;               // what every waiter that is not moved is woken with
  OwnerRecovery recovery = nullptr;  // what the moved waiters name from then on
};

struct RequeueResult {
  std::size_t woken = 0;
  std::size_t moved = 0;
};

// Empties the queue of `from`, atomically with respect to every other operation on either
// address: if decide(waiting) says `move`, each waiter whose request() is the address `to` (as an
// integer: that is how a waiter declares where it may be moved) goes to the tail of `to`'s queue,
// keeping its order and its waiting_since(); every other waiter is woken with the token.
RequeueResult requeue(const void* from, const void* to,
                      FunctionRef<RequeueDecision(std::size_t waiting)> decide);

// The request() of the oldest waiter of `address`, if any (a snapshot).
std::optional<std::int64_t> first_request(const void* address);

// How many waiters are queued for `address` (a snapshot: for tests and diagnostics).
std::size_t queued_count(const void* address);

// Calls `visit(address, recovery)` for every address that has a queued waiter naming an
// OwnerRecovery, once per address and bucket, with that bucket's lock held: `visit` must only
// record what it is given.
void for_each_recoverable(FunctionRef<void(const void* address, OwnerRecovery recovery)> visit);

}  // namespace parking_lot
}  // namespace parklock
