// ConditionWord::notify_all (which requeues the waiters onto the held mutex's queue) against
// waking every waiter with notify_one() once per waiter, so that they all wake and fight for the
// mutex; std::condition_variable::notify_all is a third, reference line.
//
// One round: N threads wait on the condition (each took the mutex, counted itself, and waits
// while the generation is unchanged). The benchmark thread takes the mutex, bumps the
// generation, wakes them with the policy's method, releases the mutex, and the round's time runs
// until every waiter has gone through the mutex once (a counter increment under it). The time is
// set manually (UseManualTime): setting up the next round is not part of it.
//
// Each parklock line also counts, per round, the wake-ups of waiters that went on to compete for
// the mutex ("woken") and those among them that found it taken and parked on it again ("futile"),
// from the per-thread counters of addon/primitives/wake_stats.h, which each waiter adds up around
// its wait.
//
// Names pair up by the part before the template argument, like mutex_bench.cpp:
//   BM_WakeWaiters<RequeueAll>/8/manual_time   BM_WakeWaiters<NotifyOneEach>/8/manual_time
#include <benchmark/benchmark.h>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#endif

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "lot/thread_id.h"
#include "primitives/condition.h"
#include "primitives/mutex.h"
#include "primitives/wake_stats.h"

namespace {

// A parklock mutex and condition over two words, as JavaScript would have them in shared memory.
class ParklockWords {
 public:
  void lock() { mutex().lock(parklock::current_thread_id()); }
  void unlock() { mutex().unlock(parklock::current_thread_id()); }
  void wait() { condition().wait(mutex(), parklock::current_thread_id()); }

 protected:
  parklock::MutexWord mutex() { return parklock::MutexWord(&mutex_word_); }
  parklock::ConditionWord condition() { return parklock::ConditionWord(&condition_word_); }

 private:
  alignas(64) std::int32_t mutex_word_ = 0;
  alignas(64) std::int32_t condition_word_ = 0;
};

// One call: the waiters move onto the mutex's queue and are woken one per unlock.
struct RequeueAll : ParklockWords {
  void wake_all(int /*waiters*/) { condition().notify_all(); }
};

// A wake-up per waiter: all of them run at once and contend for the mutex.
struct NotifyOneEach : ParklockWords {
  void wake_all(int waiters) {
    for (int i = 0; i < waiters; ++i) condition().notify_one();
  }
};

// The standard library's pair, for reference (glibc also wakes all and lets them contend).
class StdNotifyAll {
 public:
  void lock() { mutex_.lock(); }
  void unlock() { mutex_.unlock(); }
  void wait() {
    std::unique_lock<std::mutex> held(mutex_, std::adopt_lock);
    condition_.wait(held);
    held.release();  // still locked: the caller unlocks
  }
  void wake_all(int /*waiters*/) { condition_.notify_all(); }

 private:
  std::mutex mutex_;
  std::condition_variable condition_;
};

// The harness's own waits and wake-ups (rounds announced, waiters arrived, waiters passed) sleep
// in the kernel at once. std::atomic::wait would not do: libstdc++ spins and yields before it
// sleeps, so the waiters that have already passed, and the benchmark thread waiting for the rest,
// would take CPU time from the waiters still to be woken. On a machine with few cores that skews
// the comparison by policy: requeued waiters are woken one by one, each needing a core just then,
// while waking everyone makes them all runnable from the start.
#if defined(__linux__)
int* futex_word(std::atomic<int>& value) {
  static_assert(sizeof(std::atomic<int>) == sizeof(int) && std::atomic<int>::is_always_lock_free);
  return reinterpret_cast<int*>(&value);
}

// Blocks until `value` reaches at least `target`.
void wait_at_least(std::atomic<int>& value, int target) {
  for (int seen; (seen = value.load()) < target;) {
    syscall(SYS_futex, futex_word(value), FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr, 0);
  }
}

void wake_waiters(std::atomic<int>& value) {
  syscall(SYS_futex, futex_word(value), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}
#else
void wait_at_least(std::atomic<int>& value, int target) {
  for (int seen; (seen = value.load()) < target;) value.wait(seen);
}

void wake_waiters(std::atomic<int>& value) {
  value.notify_all();
}
#endif

// N waiter threads that live across rounds, so thread start-up is never timed.
template <typename Policy>
class WaiterPool {
 public:
  explicit WaiterPool(int waiters) : waiters_(waiters) {
    for (int i = 0; i < waiters; ++i) threads_.emplace_back([this] { run(); });
  }
  WaiterPool(const WaiterPool&) = delete;
  WaiterPool& operator=(const WaiterPool&) = delete;
  ~WaiterPool() { stop(); }

  // Runs one round and returns the time from the wake-up until all waiters had the mutex.
  std::chrono::duration<double> round() {
    const int round = ++rounds_;
    const int target = waiters_ * round;
    announce(round);
    wait_at_least(arrived_, target);
    // Each waiter counted itself while holding the mutex and releases it only inside wait(),
    // once queued on the condition: holding the mutex here means that all of them are queued.
    policy_.lock();
    const auto start = std::chrono::steady_clock::now();
    ++generation_;
    policy_.wake_all(waiters_);
    policy_.unlock();
    wait_at_least(passed_, target);
    return std::chrono::steady_clock::now() - start;
  }

  // Totals over the rounds run so far (complete once stop() has returned).
  std::uint64_t woken() const { return woken_.load(); }
  std::uint64_t futile() const { return futile_.load(); }
  std::uint64_t handed_off() const { return handed_off_.load(); }

  void stop() {
    if (threads_.empty()) return;
    stopping_.store(true);
    announce(rounds_ + 1);
    for (auto& thread : threads_) thread.join();
    threads_.clear();
  }

  // After stop(): whether the mutex let exactly one waiter in at a time.
  bool count_is_exact() const { return counter_ == static_cast<std::int64_t>(waiters_) * rounds_; }

 private:
  void announce(int round) {
    announced_.store(round);
    wake_waiters(announced_);
  }

  void run() {
    for (int round = 1;; ++round) {
      // Waits for the round to be announced, so that a waiter that has just passed does not
      // re-take the mutex while the current round is still being timed.
      wait_at_least(announced_, round);
      if (stopping_.load()) return;
      policy_.lock();
      const int generation = generation_;
      if (arrived_.fetch_add(1) + 1 == waiters_ * round) wake_waiters(arrived_);
      // The wake-ups counted are this wait's alone: the arrival's contention is not a round's.
      const parklock::wake_stats::Counts before = parklock::wake_stats::snapshot();
      while (generation_ == generation) policy_.wait();
      const parklock::wake_stats::Counts after = parklock::wake_stats::snapshot();
      ++counter_;  // guarded by the mutex; checked for lost increments at the end
      if (passed_.fetch_add(1) + 1 == waiters_ * round) wake_waiters(passed_);
      policy_.unlock();
      woken_ += after.woken - before.woken;
      futile_ += after.futile - before.futile;
      handed_off_ += after.handed_off - before.handed_off;
    }
  }

  const int waiters_;
  Policy policy_;
  int generation_ = 0;        // guarded by the policy's mutex
  std::int64_t counter_ = 0;  // guarded by the policy's mutex
  int rounds_ = 0;            // benchmark thread only
  std::atomic<std::uint64_t> woken_{0};
  std::atomic<std::uint64_t> futile_{0};
  std::atomic<std::uint64_t> handed_off_{0};
  std::atomic<int> announced_{0};
  std::atomic<int> arrived_{0};
  std::atomic<int> passed_{0};
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> threads_;
};

template <typename Policy>
void BM_WakeWaiters(benchmark::State& state) {
  const int waiters = static_cast<int>(state.range(0));
  WaiterPool<Policy> pool(waiters);
  for (auto _ : state) state.SetIterationTime(pool.round().count());
  pool.stop();
  if (!pool.count_is_exact()) state.SkipWithError("lost increments under the mutex");
  state.SetItemsProcessed(state.iterations() * waiters);
  if (!std::is_same_v<Policy, StdNotifyAll> && state.iterations() > 0) {
    const auto per_round = [&](std::uint64_t total) {
      return static_cast<double>(total) / static_cast<double>(state.iterations());
    };
    state.counters["woken"] = per_round(pool.woken());
    state.counters["futile"] = per_round(pool.futile());
    state.counters["handed_off"] = per_round(pool.handed_off());
  }
}

}  // namespace

BENCHMARK_TEMPLATE(BM_WakeWaiters, RequeueAll)
    ->Arg(2)
    ->Arg(4)
    ->Arg(8)
    ->Arg(16)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_WakeWaiters, NotifyOneEach)
    ->Arg(2)
    ->Arg(4)
    ->Arg(8)
    ->Arg(16)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_WakeWaiters, StdNotifyAll)
    ->Arg(2)
    ->Arg(4)
    ->Arg(8)
    ->Arg(16)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
