// The parking lot: process-wide FIFO queues of waiters keyed by memory address.
//
// A primitive keeps all of its state in a few words of (shared) memory and comes here only when a
// thread must wait. The lot hashes the key (an address in the primitive's own key space) to one
// of a fixed number of buckets; each bucket has its own lock and one intrusive FIFO list holding
// the waiters of every key that hashes to it, so unrelated primitives rarely share a lock and the
// per-key order is the arrival order.
//
// Contract. Every callback below runs with the key's bucket lock held (requeue: both buckets'),
// so it must not call back into the lot; wake-ups are delivered after the lock is released.
// - park()/enqueue() run `validate` and queue the waiter only if it returns true. A waker changes
//   the word and then takes the same bucket lock to dequeue, so a waiter that saw the old value is
//   already queued when the waker looks: no wake-up is lost.
// - unpark_one() runs `decide` after removing the oldest waiter (if any) and before waking it:
//   there the primitive updates its word knowing whether more waiters remain, and chooses the
//   token the woken waiter receives ("the lock is yours" versus "compete for it").
// - unpark_filter() offers the waiters, oldest first, to a Grant and wakes those it grants; its
//   `finish(queue_empty)` runs after the walk. The same Grant runs when a waiter LEAVES without a
//   wake-up (its park timed out or was interrupted, or cancel() removed it): in the same critical
//   section as the removal, so a primitive whose strict queue order held others back lets them
//   through, and one that marks "waiters present" in its word clears the mark when the queue is
//   empty, atomically with the departure. No stale marker outlives its last waiter.
// - A waiter that a waker has dequeued always receives its token, even if it was leaving: park()
//   then reports it (interrupted set), and cancel() returns false; the waiter must act on the
//   token (pass a lock on, say).
// - A waiter's memory must stay valid from enqueue until cancel() returns true or on_unparked has
//   been called.
// - Sleeping, and the polling of a thread's interrupt, belong to the thread parker
//   (thread_parker.h, interrupt.h), not to this contract.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "across_processes/shared_region.h"
#include "lot/deadline.h"
#include "lot/function_ref.h"
#include "lot/thread_id.h"
#include "lot/thread_parker.h"

namespace parklock {

// What a waker hands to the waiter it dequeued; its meaning belongs to the primitive. Each
// primitive draws its tokens from a range of its own (kTokenSpaceSize values from a multiple of
// it, below 1 << kEndedOwnerShift), so that a token that reached the wrong waiter could never be
// read as a grant; test/cpp/wake_token_test.cpp checks that no two primitives share one.
using WakeToken = std::intptr_t;
inline constexpr WakeToken kTokenSpaceSize = 16;

// What a queue belongs to: one static object per primitive, which its waiters name while queued
// (requeue() gives moved waiters the new queue's site).
struct WaitSite {
  // The primitive's name, for diagnostics ("mutex", "semaphore", ...).
  const char* kind;
  // The primitive's word for a key of its queues (keys are in each primitive's own key space).
  const void* (*address)(const void* key) noexcept;
  // For a lock that records its owner: who holds the lock at `key` now, or kNoThread. Null for
  // primitives without an owner.
  ThreadId (*holder)(const void* key) noexcept;
  // For a lock that records its owner: hands the lock at `key` on when the thread `ended` has
  // ended holding it (owner_death.h), so that the end of a thread can serve the queues waiting
  // for it. Runs with no bucket lock held. Null for primitives without an owner.
  void (*recover)(const void* key, ThreadId ended) noexcept;
  // For a primitive whose words may lie in memory other processes share (cross_process.h): what
  // this process does when the word at `key` changed in another process (a release, an arrival, a
  // count-down), run by the relay with no bucket lock held: wakes the local waiters that the
  // change may concern to look at the word again, leaving it marked as having waiters. Null: the
  // primitive does not wait across processes.
  void (*look_again)(const void* key) noexcept = nullptr;
};

// The address a key names, for the many primitives that key their queues by their word.
inline const void* key_is_address(const void* key) noexcept {
  return key;
}

class Waiter {
 public:
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;

  // The address it is queued on (requeue() may move it); changes only under the bucket locks.
  const void* address() const noexcept { return address_.load(std::memory_order_relaxed); }
  ThreadId thread() const noexcept { return thread_; }
  // When this waiter started waiting for what it waits for; re-parking keeps it, so diagnostics
  // see the whole wait, not just the latest stretch of it.
  Clock::time_point waiting_since() const noexcept { return since_; }
  // What the waiter asks for, in the primitive's terms (permits, shared or exclusive, ...).
  std::int64_t request() const noexcept { return request_; }
  // The primitive whose queue it is in (null for a bare waiter); changes only under the bucket
  // locks.
  const WaitSite* site() const noexcept { return site_; }
  // A thread blocked in park(), as opposed to a callback (an asynchronous wait).
  bool blocking() const noexcept { return blocking_; }

 protected:
  Waiter(ThreadId thread, Clock::time_point since, std::int64_t request = 0,
         bool blocking = false) noexcept
      : thread_(thread), since_(since), request_(request), blocking_(blocking) {}
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
  bool blocking_;
  const WaitSite* site_ = nullptr;  // guarded by the bucket lock
  // The key at which unpark_one() last dequeued this asynchronous waiter without a fair turn: if
  // it queues there again, it lost the race it was woken for, and its next dequeue there is fair
  // (UnparkInfo::be_fair). Guarded by the bucket lock.
  const void* passed_over_at_ = nullptr;
};

// A thread blocked in the lot (a blocking wait). It lives on that thread's stack, which stays
// valid because the thread does not return before it was unparked or has taken itself out.
class BlockingWaiter final : public Waiter {
 public:
  // `thread`: the identity it waits as (WaitStep::acts_as()), the calling thread's by default.
  BlockingWaiter(Clock::time_point since, std::int64_t request,
                 ThreadId thread = current_thread_id())
      : Waiter(thread, since, request, /*blocking=*/true) {}

  ThreadParker& parker() noexcept { return parker_; }
  // What the latest wake-up handed over (read after the parker saw it).
  WakeToken token() const noexcept { return token_; }

  // Sleeps as ThreadParker::park() does. A waiter that queued first among its key's blocking
  // waiters, on a key in a region other processes map, also sleeps on the key's word itself, so
  // that a release in another process wakes it with one system call rather than through this
  // process's relay, whose thread would then wake it (cross_process.h). Woken that way, it does
  // what the relay does (WaitSite::look_again, which may wake this very waiter) and sleeps on.
  // The relay still watches the key as well: nothing depends on this waiter's watch, which only
  // saves a hop, and ends when the waiter is moved to another key (requeue()).
  ThreadParker::Wake park(Deadline deadline);

  // For the lot, as it queues this waiter (bucket lock held): the shared key whose word park()
  // watches, and the word as read before the waiter's check; null `key`: none.
  void watch_word(const void* key, const WaitSite* site, std::int32_t seen) noexcept {
    watched_key_ = key;
    watched_site_ = site;
    watched_seen_ = seen;
  }

 private:
  void on_unparked(WakeToken token) noexcept override;

  ThreadParker parker_;
  WakeToken token_ = 0;
  // Written only by this waiter's own thread (which queues it), read by it as it sleeps.
  const void* watched_key_ = nullptr;
  const WaitSite* watched_site_ = nullptr;
  std::int32_t watched_seen_ = 0;
};

// What unpark_one found, as seen by `decide` under the bucket lock.
struct UnparkInfo {
  bool unparked = false;        // a waiter was dequeued
  bool has_more = false;        // other waiters for the same key remain queued
  ThreadId thread = kNoThread;  // the dequeued waiter's thread
  // Time for a fair hand-off: the primitive should give what it releases to this waiter directly
  // rather than let running threads barge in. Each bucket keeps a timer that comes due at a
  // random point within kFairnessInterval of its last fair unpark, or of the arrival of its first
  // waiter if it had none, so barging (which is what makes a contended lock fast) is bounded: the
  // waiter at the head of a queue waits about that long beyond its turn at most. A random
  // per-bucket timer, rather than each waiter's own age, cannot turn every unlock into a hand-off
  // once all waiters are old (the convoy of a starving lock).
  //
  // An asynchronous waiter is also due once it has been woken to compete and has lost: it competes
  // only when its thread's event loop runs its callback, long after running threads have taken
  // what was released, and it would queue at the back again each time, until the timer. On 16
  // cores, the main thread's lockAsync() beside 2 workers hammering the same mutex waited 83-96 µs
  // at the 99th percentile without this rule and 38-41 µs with it; beside 15, 875-937 µs and
  // 637-710 µs. The price is the hand-off's: the mutex stays idle until the event loop runs the
  // callback, which cost the 2 busy workers about a third of their throughput there (bench
  // scenario mixed; docs/benchmarks.md).
  bool be_fair = false;
};

// The longest a bucket's fairness timer runs (see UnparkInfo::be_fair).
inline constexpr Clock::duration kFairnessInterval = std::chrono::milliseconds(1);

struct ParkResult {
  enum class Status { kUnparked, kInvalid, kTimedOut, kInterrupted };
  Status status;
  WakeToken token = 0;  // meaningful when status is kUnparked
  // The thread's interrupt was requested, but a waker had already dequeued this waiter, so it was
  // unparked anyway: the caller must pass the token on before giving up. Also set when the
  // interrupt is found requested right after an ordinary wake-up (it is polled once more then),
  // so a thread being stopped never keeps what it was handed in its last instant.
  bool interrupted = false;
};

namespace parking_lot {

// For a grant step that may wake waiters to compete rather than hand them what they wait for:
// before the first offer the lot says whether the oldest waiter's turn is fair
// (UnparkInfo::be_fair, which it may restart the bucket's timer for), and an asynchronous waiter
// it dequeues with `compete` is one woken to compete, due a fair turn if it queues there again.
struct FairTurn {
  WakeToken compete;
  bool be_fair = false;  // written by the lot
};

// A FIFO grant step: `offer(request)` is asked for each waiter, oldest first, and returns the
// token it is woken with, or nothing, which ends the walk (grants are strictly FIFO); then
// `finish(queue_empty)` runs, where the primitive records whether waiters remain. Both run under
// the bucket lock. A null `offer` grants nobody. `turn`: see FairTurn.
struct Grant {
  const FunctionRef<std::optional<WakeToken>(std::int64_t request)>* offer;
  FunctionRef<void(bool queue_empty)> finish;
  FairTurn* turn = nullptr;
};

// How a thread parks; only `validate` and `deadline` are always needed.
struct ParkOptions {
  Deadline deadline = Deadline::never();
  // When the caller began waiting (Waiter::waiting_since()); defaults to now.
  Clock::time_point since = Clock::now();
  // Runs after the waiter is queued and the bucket lock released, before sleeping: a condition
  // variable releases its mutex here, so that a notifier which takes that mutex finds it queued.
  const FunctionRef<void()>* before_sleep = nullptr;
  // What the waiter asks for (Waiter::request()).
  std::int64_t request = 0;
  // Waiter::site().
  const WaitSite* site = nullptr;
  // Runs when the waiter leaves without a wake-up (timeout, interrupt), in the same critical
  // section as its removal.
  const Grant* on_leave = nullptr;
};

// Blocks the calling thread on `key` if `validate()` holds, until unparked, the deadline, or the
// thread's interrupt. A waiter that requeue() moved to another key has been notified: from then
// on the deadline no longer applies (it waits for its turn on the new key).
ParkResult park(const void* key, FunctionRef<bool()> validate, const ParkOptions& options);
inline ParkResult park(const void* key, FunctionRef<bool()> validate, Deadline deadline) {
  ParkOptions options;
  options.deadline = deadline;
  return park(key, validate, options);
}

// Queues a waiter whose wake-up is a callback (an asynchronous wait) if `validate()` holds;
// `site` is what it names as its Waiter::site() while queued there.
bool enqueue(const void* key, Waiter& waiter, FunctionRef<bool()> validate,
             const WaitSite* site = nullptr);

// Wake-ups dequeued but not yet delivered (see cancel()).
using Wakeups = std::vector<std::pair<Waiter*, WakeToken>>;

// Removes a queued waiter and runs the Grant `on_leave_for(key)` names (null: none) in the same
// critical section; `key` is where the waiter was found (requeue() may have moved it to another
// primitive's queue). False if a waker already took it: its wake-up is on the way. The wake-ups
// of waiters the Grant let through are delivered before cancel() returns, or, with `deferred`,
// appended there for the caller to deliver() once it has released a lock that their delivery may
// need (a thread's teardown, which removes its own waiters while it holds its context's lock).
bool cancel(Waiter& waiter, FunctionRef<const Grant*(const void* key)> on_leave_for,
            Wakeups* deferred = nullptr);
bool cancel(Waiter& waiter);

// Delivers wake-ups a cancel() deferred.
void deliver(const Wakeups& wakeups);

// Dequeues the longest-waiting waiter for `key`, runs `decide` under the bucket lock (also when
// nobody is queued, with info.unparked false) and wakes the waiter with the token it returns.
UnparkInfo unpark_one(const void* key, FunctionRef<WakeToken(const UnparkInfo&)> decide);

// Wakes the longest-waiting waiter for `key` in this process with `token`, and no other process's
// (the relay of cross_process.h, passing on a release made elsewhere); false if none was queued.
bool unpark_here(const void* key, WakeToken token);

// Wakes up to `count` waiters for `key` in FIFO order, each with `token`; returns how many.
std::size_t unpark_some(const void* key, std::size_t count, WakeToken token);

// Runs `grant` over the waiters of `key` (see Grant) and wakes those granted, or appends their
// wake-ups to `deferred` (as for cancel()); returns how many.
std::size_t unpark_filter(const void* key, const Grant& grant, Wakeups* deferred = nullptr);

// What requeue() should do, decided under both bucket locks from how many wait on `from`.
struct RequeueDecision {
  bool move = false;               // move the waiters to `to` (but those `wake_instead` names)
  WakeToken token = 0;             // without `move`: what every waiter is woken with
  const WaitSite* site = nullptr;  // what the moved waiters name from then on
};

struct RequeueResult {
  std::size_t woken = 0;
  std::size_t moved = 0;
};

// Empties the queue of `from`, atomically with respect to every other operation on either key.
// If decide(waiting) says `move`, each waiter, oldest first, is woken with the token
// wake_instead(waiter) returns, or, if none, goes to the tail of `to`'s queue, keeping its order
// and its waiting_since(); otherwise every waiter is woken with the decision's token. Both
// callbacks run under both bucket locks.
RequeueResult requeue(const void* from, const void* to,
                      FunctionRef<RequeueDecision(std::size_t waiting)> decide,
                      FunctionRef<std::optional<WakeToken>(const Waiter& waiter)> wake_instead);

// Overrides every bucket's fairness timer (UnparkInfo::be_fair), process-wide: for tests that must
// pin the hand-off policy regardless of timing.
enum class FairnessForTesting { kTimer, kAlways, kNever };
void set_fairness_for_testing(FairnessForTesting fairness) noexcept;

// Runs `hook` in every grant step (unpark_filter(), a departing waiter's Grant) between its
// offers and its finish, under the bucket lock, process-wide: for tests that must change a word
// there, as another thread's fast path may. nullptr (the default) runs nothing.
void set_grant_step_hook_for_testing(void (*hook)()) noexcept;

// How many waiters are queued for `key` (a snapshot: for tests and diagnostics).
std::size_t queued_count(const void* key);

// Calls `visit(key, site)` for every key that has a queued waiter whose site can recover its lock
// from an ended owner, once per key and bucket, with that bucket's lock held: `visit` must only
// record what it is given.
void for_each_recoverable(FunctionRef<void(const void* key, const WaitSite& site)> visit);

// One queued waiter as snapshot() saw it.
struct QueuedWaiter {
  const void* key;
  const WaitSite* site;  // null for a bare waiter
  const void* address;   // the primitive's word (site->address(key)), or the key
  ThreadId holder;       // the lock's holder then (site->holder), or kNoThread
  ThreadId thread;
  bool blocking;
  Clock::time_point since;
  std::int64_t request;
  // The region the key lies in, kept mapped while the snapshot is read (shared_region.h).
  shared_region::RegionUse region;
};

// Every waiter queued anywhere, bucket by bucket, each bucket's waiters in queue order. Each
// bucket is read under its lock (holders too, while the waiter keeps the primitive's memory
// alive), so no waiter is listed twice or half-written; different buckets are read at slightly
// different moments. Costs one uncontended lock per bucket: fine for a watchdog.
std::vector<QueuedWaiter> snapshot();

}  // namespace parking_lot
}  // namespace parklock
