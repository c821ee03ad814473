// parklock::Mutex against std::mutex, uncontended and contended.
//
// Every benchmark is a template over the mutex type, so the reported names pair up by the part
// before the template argument, e.g.
//   BM_Uncontended<std::mutex>                     BM_Uncontended<parklock::Mutex>
//   BM_Contended<std::mutex>/real_time/threads:2 BM_Contended<parklock::Mutex>/real_time/threads:2
// A script can strip "<...>" to find the pair.
//
// The critical section is one increment of a counter that the mutex guards: small enough that the
// numbers measure the lock and unlock paths (and, when contended, the hand-over between threads),
// not the work under the lock.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <mutex>
#include <string>

#include "primitives/mutex.h"

namespace {

// One mutex and the counter it guards, per mutex type. Aligned to its own cache line(s) so that
// the two instantiations never share one and disturb each other's results.
template <typename MutexType>
struct alignas(64) Guarded {
  MutexType mutex;
  std::int64_t counter = 0;
};

template <typename MutexType>
Guarded<MutexType>& shared_state() {
  static Guarded<MutexType> state;
  return state;
}

// Checks after the timed loop that no increment was lost. Google Benchmark puts every thread of a
// run through a barrier when the loop ends, so thread 0 sees the final count here. Each thread runs
// the same number of iterations.
template <typename MutexType>
void check_count(benchmark::State& state, Guarded<MutexType>& guarded) {
  if (state.thread_index() != 0) return;
  const auto expected = static_cast<std::int64_t>(state.iterations()) * state.threads();
  if (guarded.counter != expected) {
    state.SkipWithError(("lost increments: counted " + std::to_string(guarded.counter) +
                         ", expected " + std::to_string(expected))
                            .c_str());
  }
}

// One thread locking and unlocking a mutex nobody else touches: the cost of the fast paths alone.
template <typename MutexType>
void BM_Uncontended(benchmark::State& state) {
  auto& guarded = shared_state<MutexType>();
  guarded.counter = 0;
  for (auto _ : state) {
    guarded.mutex.lock();
    ++guarded.counter;
    guarded.mutex.unlock();
    // Keeps the compiler from merging or dropping the increments between iterations.
    benchmark::ClobberMemory();
  }
  check_count(state, guarded);
  state.SetItemsProcessed(state.iterations());
}

// state.threads() threads hammering one mutex. Real time, because with several threads the CPU
// time of one thread says nothing about throughput (a parked thread costs no CPU but still waits).
template <typename MutexType>
void BM_Contended(benchmark::State& state) {
  auto& guarded = shared_state<MutexType>();
  // The other threads do not touch the counter until every thread has passed the start barrier
  // that Google Benchmark runs before the loop, so thread 0 can reset it here without the lock.
  if (state.thread_index() == 0) guarded.counter = 0;
  for (auto _ : state) {
    guarded.mutex.lock();
    ++guarded.counter;
    guarded.mutex.unlock();
  }
  check_count(state, guarded);
  state.SetItemsProcessed(state.iterations());
}

}  // namespace

BENCHMARK_TEMPLATE(BM_Uncontended, std::mutex);
BENCHMARK_TEMPLATE(BM_Uncontended, parklock::Mutex);
// 8 and 16 threads show how the hand-over scales where there are that many cores; on fewer, they
// measure oversubscription.
BENCHMARK_TEMPLATE(BM_Contended, std::mutex)->ThreadRange(2, 16)->UseRealTime();
BENCHMARK_TEMPLATE(BM_Contended, parklock::Mutex)->ThreadRange(2, 16)->UseRealTime();

BENCHMARK_MAIN();
