#include "lot/parking_lot.h"

#include <array>
#include <mutex>
#include <utility>
#include <vector>

#include "across_processes/cross_process.h"
#include "across_processes/mechanism.h"

namespace parklock {

// The one place that touches Waiter's queue links; everything here runs with the bucket lock held.
class ParkingLotAccess {
 public:
  struct Bucket {
    std::mutex lock;
    Waiter* head = nullptr;  // oldest
    Waiter* tail = nullptr;  // newest
    // The fairness timer (UnparkInfo::be_fair), and the state of the generator that draws its
    // random intervals; both guarded by `lock`.
    Clock::time_point fair_at{};
    std::uint32_t random = 0;
    // How many of the queued waiters block their threads; guarded by `lock`.
    std::size_t blocking = 0;
  };

  static void append(Bucket& bucket, const void* address, Waiter& waiter, const WaitSite* site) {
    waiter.address_.store(address, std::memory_order_relaxed);
    waiter.site_ = site;
    waiter.next_ = nullptr;
    waiter.prev_ = bucket.tail;
    if (bucket.tail != nullptr) {
      bucket.tail->next_ = &waiter;
    } else {
      bucket.head = &waiter;
    }
    bucket.tail = &waiter;
    waiter.queued_ = true;
    if (waiter.blocking()) ++bucket.blocking;
  }

  static void remove(Bucket& bucket, Waiter& waiter) {
    (waiter.prev_ != nullptr ? waiter.prev_->next_ : bucket.head) = waiter.next_;
    (waiter.next_ != nullptr ? waiter.next_->prev_ : bucket.tail) = waiter.prev_;
    waiter.next_ = waiter.prev_ = nullptr;
    waiter.queued_ = false;
    if (waiter.blocking()) --bucket.blocking;
  }

  static Waiter* first_for(const Bucket& bucket, const void* address, Waiter* after = nullptr) {
    Waiter* w = after != nullptr ? after->next_ : bucket.head;
    while (w != nullptr && w->address() != address) w = w->next_;
    return w;
  }

  static bool queued(const Waiter& waiter) { return waiter.queued_; }
  static const void* passed_over_at(const Waiter& waiter) { return waiter.passed_over_at_; }
  static void set_passed_over_at(Waiter& waiter, const void* key) { waiter.passed_over_at_ = key; }
  static Waiter* head(const Bucket& bucket) { return bucket.head; }
  static Waiter* next(const Waiter& waiter) { return waiter.next_; }
  static void deliver(Waiter& waiter, WakeToken token) { waiter.on_unparked(token); }
};

namespace {

using Bucket = ParkingLotAccess::Bucket;

// A power of two, large enough that a few hundred live primitives rarely share a bucket.
constexpr std::size_t kBucketCount = 1024;

struct alignas(64) PaddedBucket : Bucket {};

std::array<PaddedBucket, kBucketCount>& buckets() {
  // Never destroyed: threads may still park while static destructors run at process exit.
  static auto* table = new std::array<PaddedBucket, kBucketCount>();
  return *table;
}

std::atomic<parking_lot::FairnessForTesting> fairness_override{
    parking_lot::FairnessForTesting::kTimer};

std::atomic<void (*)()> grant_step_hook{nullptr};

// Whether a blocking waiter of `thread` is queued in `bucket` (its lock held). Asked at each
// release that finds an asynchronous waiter first: the count spares the walk where none blocks,
// such as a lock with thousands of pending Promise waits.
bool thread_blocked_in(const Bucket& bucket, ThreadId thread) {
  if (bucket.blocking == 0) return false;
  for (const Waiter* w = ParkingLotAccess::head(bucket); w != nullptr;
       w = ParkingLotAccess::next(*w)) {
    if (w->blocking() && w->thread() == thread) return true;
  }
  return false;
}

// Whether a blocking waiter is queued for `address` in `bucket` (its lock held).
bool blocking_waiter_for(const Bucket& bucket, const void* address) {
  if (bucket.blocking == 0) return false;
  for (Waiter* w = ParkingLotAccess::first_for(bucket, address); w != nullptr;
       w = ParkingLotAccess::first_for(bucket, address, w)) {
    if (w->blocking()) return true;
  }
  return false;
}

// Restarts `bucket`'s fairness timer (its lock held), at a random point within
// kFairnessInterval from `now`, so that buckets do not fall into step.
void restart_fairness_timer(Bucket& bucket, Clock::time_point now) {
  // xorshift32, seeded from the bucket's address (any non-zero value will do).
  std::uint32_t x = bucket.random != 0
                        ? bucket.random
                        : static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(&bucket)) | 1;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  bucket.random = x;
  const auto interval = std::chrono::duration_cast<Clock::duration>(kFairnessInterval).count();
  bucket.fair_at = now + Clock::duration(static_cast<Clock::rep>(x % interval));
}

// Whether unparking `chosen` from `key` in `bucket` (whose lock the caller holds) is due to be
// fair (see UnparkInfo::be_fair); if the timer made it so, the timer restarts.
bool fair_now(Bucket& bucket, const Waiter& chosen, const void* key) {
  // An asynchronous waiter whose thread is blocked in a wait queued here could not compete before
  // that wait ended, which may be a wait for this very lock: woken to compete, it would leave the
  // lock free with that wait asleep behind it for ever. Handed the lock, it is seen by the blocked
  // wait's watch (wait_step.h, LockWatch), which gives up. Not a matter of timing: no override.
  if (!chosen.blocking() && thread_blocked_in(bucket, chosen.thread())) return true;
  switch (fairness_override.load(std::memory_order_relaxed)) {
    case parking_lot::FairnessForTesting::kAlways:
      return true;
    case parking_lot::FairnessForTesting::kNever:
      return false;
    case parking_lot::FairnessForTesting::kTimer:
      break;
  }
  if (ParkingLotAccess::passed_over_at(chosen) == key) return true;
  const Clock::time_point now = Clock::now();
  if (now < bucket.fair_at) return false;
  restart_fairness_timer(bucket, now);
  return true;
}

// Whether `bucket` (its lock held) has no waiter queued, leaving out those of `leaving` (a key
// whose waiters are being moved away, or nullptr).
bool idle_but_for(const Bucket& bucket, const void* leaving) {
  for (const Waiter* w = ParkingLotAccess::head(bucket); w != nullptr;
       w = ParkingLotAccess::next(*w)) {
    if (w->address() != leaving) return false;
  }
  return true;
}

// Called as the first waiter joins an idle bucket. Nobody in it has waited for a turn yet, so
// the time since the last fair unpark owes them nothing: without the restart, the first unpark
// after a quiet spell would always hand over, for example the mutex that a condition variable's
// notify_all() has just requeued its waiters onto, while the waiters it woke are running and
// about to take it. The timer then runs from the first arrival: fairness still comes due within
// kFairnessInterval of it.
void start_fairness_timer(Bucket& bucket) {
  restart_fairness_timer(bucket, Clock::now());
}

Bucket& bucket_for(const void* address) {
  // Fibonacci hashing of the word address (the low two bits are always zero for int32 words).
  const auto key = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(address) >> 2);
  const std::size_t index = (key * 0x9E3779B97F4A7C15ull) >> (64 - 10);
  static_assert(kBucketCount == std::size_t{1} << 10);
  return buckets()[index];
}

using Woken = parking_lot::Wakeups;

// Runs `grant` over the waiters of `key` in `bucket` (whose lock the caller holds), dequeuing
// those granted into `woken`, to be delivered once the lock is released.
void run_grant(Bucket& bucket, const void* key, const parking_lot::Grant& grant, Woken& woken) {
  Waiter* w = ParkingLotAccess::first_for(bucket, key);
  if (grant.offer != nullptr) {
    // Never on a shared key (cross_process.h).
    if (grant.turn != nullptr && w != nullptr) {
      grant.turn->be_fair = fair_now(bucket, *w, key) && !cross_process::is_shared(key);
    }
    while (w != nullptr) {
      std::optional<WakeToken> token = (*grant.offer)(w->request());
      if (!token) break;
      if (grant.turn != nullptr) {
        const bool competes = !w->blocking() && *token == grant.turn->compete;
        ParkingLotAccess::set_passed_over_at(*w, competes ? key : nullptr);
      }
      Waiter* next = ParkingLotAccess::first_for(bucket, key, w);
      ParkingLotAccess::remove(bucket, *w);
      woken.emplace_back(w, *token);
      w = next;
    }
  }
  if (auto* hook = grant_step_hook.load(std::memory_order_relaxed)) hook();
  // Other processes may have waiters on a shared key: its queue is never reported empty.
  grant.finish(w == nullptr && !cross_process::is_shared(key));
}

void deliver_all(const Woken& woken) {
  for (auto [waiter, token] : woken) ParkingLotAccess::deliver(*waiter, token);
}

void deliver_or_defer(const Woken& woken, parking_lot::Wakeups* deferred) {
  if (deferred != nullptr) {
    deferred->insert(deferred->end(), woken.begin(), woken.end());
  } else {
    deliver_all(woken);
  }
}

}  // namespace

namespace {

// The waiter whose own thread is looking again at its shared word (BlockingWaiter::park()): a
// wake-up that thread delivers to it finds it awake.
thread_local const BlockingWaiter* looking_again_for = nullptr;

}  // namespace

void BlockingWaiter::on_unparked(WakeToken token) noexcept {
  token_ = token;  // published by the parker's release store
  if (looking_again_for == this) {
    parker_.unpark_self();
  } else {
    parker_.unpark();
  }
}

ThreadParker::Wake BlockingWaiter::park(Deadline deadline) {
  for (;;) {
    if (watched_key_ == nullptr || address() != watched_key_) return parker_.park(deadline);
    switch (parker_.park_watching(deadline, cross_process::word_of(watched_key_), watched_seen_)) {
      case ThreadParker::WatchedWake::kUnparked:
        return ThreadParker::Wake::kUnparked;
      case ThreadParker::WatchedWake::kTimedOut:
        return ThreadParker::Wake::kTimedOut;
      case ThreadParker::WatchedWake::kInterrupted:
        return ThreadParker::Wake::kInterrupted;
      case ThreadParker::WatchedWake::kWordChanged:
        // Moved meanwhile (requeue()): the relay looks after the key it left.
        if (address() != watched_key_) break;
        // Read before looking, as the relay does: a change after this read ends the next sleep.
        watched_seen_ = cross_process::word_at(watched_key_);
        looking_again_for = this;
        cross_process::look_again_here(watched_key_, watched_site_);
        looking_again_for = nullptr;
        break;
    }
  }
}

namespace parking_lot {

bool enqueue(const void* address, Waiter& waiter, FunctionRef<bool()> validate,
             const WaitSite* site) {
  const bool shared = cross_process::is_shared(address);
  std::int32_t seen = 0;
  {
    Bucket& bucket = bucket_for(address);
    std::lock_guard<std::mutex> guard(bucket.lock);
    // Read before the check: whatever changes the word after this read, the relay finds changed.
    if (shared) seen = cross_process::word_at(address);
    if (!validate()) return false;
    if (shared && waiter.blocking()) {
      // BlockingWaiter is the only waiter that blocks. One watcher per key and process: every
      // watcher would wake at every release and wake a waiter each (BlockingWaiter::park()).
      // A release that rings a doorbell wakes nobody sleeping on its word.
      const bool watches = site != nullptr && site->look_again != nullptr &&
                           !cross_process::uses_doorbell() && !blocking_waiter_for(bucket, address);
      static_cast<BlockingWaiter&>(waiter).watch_word(watches ? address : nullptr, site, seen);
    }
    const bool was_idle = ParkingLotAccess::head(bucket) == nullptr;
    ParkingLotAccess::append(bucket, address, waiter, site);
    if (was_idle) start_fairness_timer(bucket);
  }
  if (shared) cross_process::watch(address, site, seen);
  return true;
}

bool cancel(Waiter& waiter, FunctionRef<const Grant*(const void* key)> on_leave_for,
            Wakeups* deferred) {
  Woken woken;
  for (;;) {
    // requeue() may move the waiter between reading its key and locking that bucket; it only
    // does so holding the old bucket's lock, so re-reading under the lock detects it.
    const void* key = waiter.address();
    Bucket& bucket = bucket_for(key);
    std::unique_lock<std::mutex> guard(bucket.lock);
    if (waiter.address() != key) continue;
    if (!ParkingLotAccess::queued(waiter)) return false;
    ParkingLotAccess::remove(bucket, waiter);
    const Grant* grant = on_leave_for(key);
    if (grant != nullptr) run_grant(bucket, key, *grant, woken);
    guard.unlock();
    deliver_or_defer(woken, deferred);
    // A departure that let waiters through here may let other processes' through too.
    if (grant != nullptr && grant->offer != nullptr && cross_process::is_shared(key)) {
      cross_process::wake_others(key);
    }
    return true;
  }
}

bool cancel(Waiter& waiter) {
  return cancel(waiter, [](const void*) -> const Grant* { return nullptr; });
}

void deliver(const Wakeups& wakeups) {
  deliver_all(wakeups);
}

ParkResult park(const void* key, FunctionRef<bool()> validate, const ParkOptions& options) {
  BlockingWaiter waiter(options.since, options.request);
  if (!enqueue(key, waiter, validate, options.site)) return {ParkResult::Status::kInvalid};
  if (options.before_sleep != nullptr) (*options.before_sleep)();

  Deadline deadline = options.deadline;
  ParkResult::Status leaving;
  for (;;) {
    const ThreadParker::Wake wake = waiter.park(deadline);
    if (wake == ThreadParker::Wake::kUnparked) {
      // A thread that is being stopped cannot use what the waker gave it: say so, and the
      // primitive passes the token on exactly as for a waiter dequeued while it was leaving.
      return {ParkResult::Status::kUnparked, waiter.token(), ThreadParker::interrupt_requested()};
    }
    if (wake == ThreadParker::Wake::kInterrupted) {
      leaving = ParkResult::Status::kInterrupted;
      break;
    }
    if (waiter.address() == key) {
      leaving = ParkResult::Status::kTimedOut;
      break;
    }
    deadline = Deadline::never();  // requeued: notified, now waiting for its turn elsewhere
  }
  const auto on_leave_for = [&](const void* found) -> const Grant* {
    return found == key ? options.on_leave : nullptr;
  };
  if (cancel(waiter, on_leave_for)) return {leaving};
  // A waker dequeued us between the timeout and the cancel; its wake-up is imminent and carries a
  // token we must not drop.
  waiter.parker().park_until_unparked();
  return {ParkResult::Status::kUnparked, waiter.token(),
          leaving == ParkResult::Status::kInterrupted};
}

UnparkInfo unpark_one(const void* address, FunctionRef<WakeToken(const UnparkInfo&)> decide) {
  Bucket& bucket = bucket_for(address);
  const bool shared = cross_process::is_shared(address);
  UnparkInfo info;
  Waiter* chosen = nullptr;
  WakeToken token;
  {
    std::lock_guard<std::mutex> guard(bucket.lock);
    chosen = ParkingLotAccess::first_for(bucket, address);
    if (chosen != nullptr) {
      info.unparked = true;
      info.has_more = shared || ParkingLotAccess::first_for(bucket, address, chosen) != nullptr;
      info.thread = chosen->thread();
      info.be_fair = fair_now(bucket, *chosen, address);
      ParkingLotAccess::set_passed_over_at(*chosen,
                                           info.be_fair || chosen->blocking() ? nullptr : address);
      ParkingLotAccess::remove(bucket, *chosen);
    }
    token = decide(info);
  }
  if (chosen != nullptr) ParkingLotAccess::deliver(*chosen, token);
  if (shared) cross_process::wake_others(address);
  return info;
}

bool unpark_here(const void* address, WakeToken token) {
  Bucket& bucket = bucket_for(address);
  Waiter* chosen = nullptr;
  {
    std::lock_guard<std::mutex> guard(bucket.lock);
    chosen = ParkingLotAccess::first_for(bucket, address);
    if (chosen == nullptr) return false;
    ParkingLotAccess::set_passed_over_at(*chosen, nullptr);
    ParkingLotAccess::remove(bucket, *chosen);
  }
  ParkingLotAccess::deliver(*chosen, token);
  return true;
}

std::size_t unpark_some(const void* address, std::size_t count, WakeToken token) {
  Bucket& bucket = bucket_for(address);
  // Dequeued in batches under the lock and woken after it is released, as the contract promises.
  constexpr std::size_t kBatch = 64;
  std::size_t woken = 0;
  while (woken < count) {
    std::array<Waiter*, kBatch> batch;
    std::size_t taken = 0;
    {
      std::lock_guard<std::mutex> guard(bucket.lock);
      Waiter* w = ParkingLotAccess::first_for(bucket, address);
      while (w != nullptr && taken < kBatch && woken + taken < count) {
        Waiter* next = ParkingLotAccess::first_for(bucket, address, w);
        ParkingLotAccess::remove(bucket, *w);
        batch[taken++] = w;
        w = next;
      }
    }
    for (std::size_t i = 0; i < taken; ++i) ParkingLotAccess::deliver(*batch[i], token);
    woken += taken;
    if (taken < kBatch) break;
  }
  if (cross_process::is_shared(address)) cross_process::wake_others(address);
  return woken;
}

std::size_t unpark_filter(const void* key, const Grant& grant, Wakeups* deferred) {
  Bucket& bucket = bucket_for(key);
  Woken woken;
  {
    std::lock_guard<std::mutex> guard(bucket.lock);
    run_grant(bucket, key, grant, woken);
  }
  deliver_or_defer(woken, deferred);
  if (cross_process::is_shared(key)) cross_process::wake_others(key);
  return woken.size();
}

RequeueResult requeue(const void* from, const void* to,
                      FunctionRef<RequeueDecision(std::size_t waiting)> decide,
                      FunctionRef<std::optional<WakeToken>(const Waiter& waiter)> wake_instead) {
  Bucket& source = bucket_for(from);
  Bucket& target = bucket_for(to);
  // Two bucket locks are only ever taken here, always in address order, so this cannot deadlock.
  Bucket& lower = &source < &target ? source : target;
  Bucket& upper = &source < &target ? target : source;
  std::unique_lock<std::mutex> first(lower.lock);
  std::unique_lock<std::mutex> second;
  if (&lower != &upper) second = std::unique_lock<std::mutex>(upper.lock);

  // Read before the move, as enqueue() reads before its check.
  const bool shared_target = cross_process::is_shared(to);
  const std::int32_t target_seen = shared_target ? cross_process::word_at(to) : 0;
  std::size_t waiting = 0;
  for (Waiter* w = ParkingLotAccess::first_for(source, from); w != nullptr;
       w = ParkingLotAccess::first_for(source, from, w)) {
    ++waiting;
  }
  const RequeueDecision decision = decide(waiting);
  const bool target_was_idle = idle_but_for(target, &source == &target ? from : nullptr);
  Woken woken;
  RequeueResult result;
  Waiter* w = ParkingLotAccess::first_for(source, from);
  while (w != nullptr) {
    Waiter* next = ParkingLotAccess::first_for(source, from, w);
    ParkingLotAccess::remove(source, *w);
    const std::optional<WakeToken> token =
        decision.move ? wake_instead(*w) : std::optional<WakeToken>(decision.token);
    if (token) {
      woken.emplace_back(w, *token);
    } else {
      ParkingLotAccess::append(target, to, *w, decision.site);
      ++result.moved;
    }
    w = next;
  }
  if (target_was_idle && result.moved > 0) start_fairness_timer(target);
  if (second.owns_lock()) second.unlock();
  first.unlock();
  deliver_all(woken);
  if (result.moved > 0 && shared_target) cross_process::watch(to, decision.site, target_seen);
  result.woken = woken.size();
  return result;
}

void set_fairness_for_testing(FairnessForTesting fairness) noexcept {
  fairness_override.store(fairness, std::memory_order_relaxed);
}

void set_grant_step_hook_for_testing(void (*hook)()) noexcept {
  grant_step_hook.store(hook, std::memory_order_relaxed);
}

std::size_t queued_count(const void* address) {
  Bucket& bucket = bucket_for(address);
  std::lock_guard<std::mutex> guard(bucket.lock);
  std::size_t n = 0;
  for (Waiter* w = ParkingLotAccess::first_for(bucket, address); w != nullptr;
       w = ParkingLotAccess::first_for(bucket, address, w)) {
    ++n;
  }
  return n;
}

void for_each_recoverable(FunctionRef<void(const void* address, const WaitSite& site)> visit) {
  for (Bucket& bucket : buckets()) {
    std::lock_guard<std::mutex> guard(bucket.lock);
    for (Waiter* w = ParkingLotAccess::head(bucket); w != nullptr; w = ParkingLotAccess::next(*w)) {
      if (w->site() == nullptr || w->site()->recover == nullptr) continue;
      // Once per address: only the first waiter of each address is reported.
      if (ParkingLotAccess::first_for(bucket, w->address()) != w) continue;
      visit(w->address(), *w->site());
    }
  }
}

std::vector<QueuedWaiter> snapshot() {
  std::vector<QueuedWaiter> waiters;
  for (Bucket& bucket : buckets()) {
    std::lock_guard<std::mutex> guard(bucket.lock);
    for (Waiter* w = ParkingLotAccess::head(bucket); w != nullptr; w = ParkingLotAccess::next(*w)) {
      const void* key = w->address();
      const WaitSite* site = w->site();
      waiters.push_back({key, site, site != nullptr ? site->address(key) : key,
                         site != nullptr && site->holder != nullptr ? site->holder(key) : kNoThread,
                         w->thread(), w->blocking(), w->waiting_since(), w->request(),
                         shared_region::RegionUse::of(key)});
    }
  }
  return waiters;
}

}  // namespace parking_lot
}  // namespace parklock
