// Helpers shared by the tests of the core: threads that cannot hang the suite, waiting for a
// condition instead of sleeping for a guessed time, and an asynchronous waiter that records its
// wake-ups.
//
// Timing policy: no test asserts that something happens *within* a time, because a loaded 2-core
// CI machine (or ThreadSanitizer) can stall any thread for a long while. Time limits here only turn
// a hang (a lost wake-up, a deadlock) into a quick, named failure.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "lot/deadline.h"
#include "lot/interrupt.h"
#include "lot/parking_lot.h"
#include "lot/thread_id.h"
#include "lot/wait_step.h"

namespace parklock::testing {

// Pins the parking lot's fair hand-off policy for the lifetime of the scope (then the timer
// rules again), so that a test of a hand-off or of barging does not depend on timing.
class FairnessOverride {
 public:
  explicit FairnessOverride(parking_lot::FairnessForTesting fairness) noexcept {
    parking_lot::set_fairness_for_testing(fairness);
  }
  ~FairnessOverride() {
    parking_lot::set_fairness_for_testing(parking_lot::FairnessForTesting::kTimer);
  }
  FairnessOverride(const FairnessOverride&) = delete;
  FairnessOverride& operator=(const FairnessOverride&) = delete;
};

// Runs `action` once, in the next grant step of the parking lot (between a primitive's grant
// decisions and its final update, under the bucket lock), for the lifetime of the scope: what
// another thread's fast path might do at that instant. `action` must not wait on the lot.
class OnceInNextGrantStep {
 public:
  explicit OnceInNextGrantStep(std::function<void()> action) {
    pending() = std::move(action);
    parking_lot::set_grant_step_hook_for_testing(&Run);
  }
  ~OnceInNextGrantStep() {
    parking_lot::set_grant_step_hook_for_testing(nullptr);
    pending() = nullptr;
  }
  OnceInNextGrantStep(const OnceInNextGrantStep&) = delete;
  OnceInNextGrantStep& operator=(const OnceInNextGrantStep&) = delete;

 private:
  static std::function<void()>& pending() {
    static std::function<void()> action;
    return action;
  }
  static void Run() {
    parking_lot::set_grant_step_hook_for_testing(nullptr);
    const std::function<void()> action = std::exchange(pending(), nullptr);
    if (action) action();
  }
};

// Runs `f` with `interrupt` (null: none) as the calling thread's interrupt, as the binding runs
// every blocking call of a Node thread.
template <typename F>
auto with_interrupt(const Interrupt* interrupt, F&& f) {
  const InterruptScope scope(interrupt);
  return f();
}

// How long to wait for something that should happen "soon" before calling it a failure.
inline constexpr std::chrono::milliseconds kWaitLimit{10'000};
// kWaitLimit in milliseconds, for Deadline::after_ms.
inline constexpr double kWaitLimitMs = 10'000;
// A deadline in milliseconds for waits in the code under test that should end by a wake-up. It
// outlasts kWaitLimit, so a test that checks a waiter is still blocked gives up before the waiter.
inline constexpr double kHangGuardMs = 20'000;
// How long a group of threads may run before the process is aborted as hung.
inline constexpr std::chrono::milliseconds kHangLimit{30'000};

// Polls `done` until it holds or `limit` passes; returns whether it holds. Polling (rather than a
// condition variable) lets tests wait on state they cannot be notified about, such as
// parking_lot::queued_count.
template <typename Predicate>
bool WaitUntil(Predicate done, std::chrono::milliseconds limit = kWaitLimit) {
  const auto give_up = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() >= give_up) return done();
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

// Where test threads wait (Wait()) until the test lets them all go on (Open()).
class Gate {
 public:
  void Open() {
    {
      const std::lock_guard<std::mutex> guard(lock_);
      open_ = true;
    }
    opened_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> guard(lock_);
    opened_.wait(guard, [this] { return open_; });
  }

 private:
  std::mutex lock_;
  std::condition_variable opened_;
  bool open_ = false;
};

// Threads whose bodies may block in the code under test. Joining waits at most a limit and then
// aborts the process with the test's name: a bug that strands a thread ends the run in seconds,
// and a failed ASSERT in the test body never leaves threads running on a dead stack frame.
class ThreadGroup {
 public:
  ThreadGroup() = default;
  ThreadGroup(const ThreadGroup&) = delete;
  ThreadGroup& operator=(const ThreadGroup&) = delete;
  ~ThreadGroup() { JoinOrAbort(); }

  template <typename Body>
  void Start(Body body) {
    threads_.emplace_back([this, body = std::move(body)]() mutable {
      body();
      std::lock_guard<std::mutex> guard(lock_);
      ++finished_;
      all_finished_.notify_all();
    });
  }

  void JoinOrAbort(std::chrono::milliseconds limit = kHangLimit) {
    {
      std::unique_lock<std::mutex> guard(lock_);
      if (!all_finished_.wait_for(guard, limit, [&] { return finished_ == threads_.size(); })) {
        const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
        std::fprintf(stderr, "%s.%s: %zu of %zu threads still blocked after %lld ms; aborting\n",
                     test != nullptr ? test->test_suite_name() : "?",
                     test != nullptr ? test->name() : "?", threads_.size() - finished_,
                     threads_.size(), static_cast<long long>(limit.count()));
        std::abort();
      }
    }
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
    finished_ = 0;
  }

 private:
  std::vector<std::thread> threads_;  // touched only by the thread that owns the group
  std::mutex lock_;
  std::condition_variable all_finished_;
  std::size_t finished_ = 0;  // guarded by lock_
};

// Runs `body` on a new thread, which ends (and so is recorded as ended) before this returns;
// returns that thread's id.
template <typename Body>
ThreadId RunOnEndingThread(Body body) {
  ThreadId id = kNoThread;
  std::thread thread([&] {
    id = current_thread_id();
    body();
  });
  thread.join();
  return id;
}

// An asynchronous waiter (what the binding uses for a Promise-returning wait) that records every
// wake-up it receives, so tests can check what was delivered, how often, and by whom.
class RecordingWaiter final : public Waiter {
 public:
  explicit RecordingWaiter(ThreadId thread = current_thread_id(),
                           Clock::time_point since = Clock::now(),
                           std::int64_t request = 0) noexcept
      : Waiter(thread, since, request) {}
  // A waiter must not be freed while queued. A test that fails half-way (an ASSERT returning
  // early) could otherwise leave it in the process-wide lot, where a later test using the same
  // stack address would find it; so it is removed, and the failure reported, here.
  ~RecordingWaiter() override {
    if (parking_lot::cancel(*this)) ADD_FAILURE() << "a RecordingWaiter was destroyed while queued";
  }

  // Runs at the start of on_unparked, before the wake-up is recorded: once it is recorded the
  // owner may destroy the waiter, so nothing may touch it after that. Set before enqueueing.
  void set_on_wake(std::function<void(WakeToken)> hook) { on_wake_ = std::move(hook); }

  std::size_t wake_count() const {
    std::lock_guard<std::mutex> guard(lock_);
    return tokens_.size();
  }
  std::vector<WakeToken> tokens() const {
    std::lock_guard<std::mutex> guard(lock_);
    return tokens_;
  }
  WakeToken last_token() const {
    std::lock_guard<std::mutex> guard(lock_);
    return tokens_.empty() ? WakeToken{-1} : tokens_.back();
  }
  std::thread::id last_waker() const {
    std::lock_guard<std::mutex> guard(lock_);
    return last_waker_;
  }

  // Blocks until `count` wake-ups have been recorded or `limit` passes; returns whether they were.
  bool WaitForWakes(std::size_t count, std::chrono::nanoseconds limit = kWaitLimit) {
    std::unique_lock<std::mutex> guard(lock_);
    return woken_.wait_for(guard, limit, [&] { return tokens_.size() >= count; });
  }

 private:
  void on_unparked(WakeToken token) noexcept override {
    if (on_wake_) on_wake_(token);
    std::lock_guard<std::mutex> guard(lock_);
    tokens_.push_back(token);
    last_waker_ = std::this_thread::get_id();
    woken_.notify_all();
  }

  std::function<void(WakeToken)> on_wake_;
  mutable std::mutex lock_;
  std::condition_variable woken_;
  std::vector<WakeToken> tokens_;  // guarded by lock_
  std::thread::id last_waker_;     // guarded by lock_
};

// Runs a WaitStep (wait_step.h) as the binding runs a Promise wait, with the test's thread as the
// waiting thread's event loop: Start() runs start(), each Settle() takes the next wake-up and
// resumes the step with it, and Cancel() is an abort. The blocking form is wait_blocking().
class PromiseWait {
 public:
  explicit PromiseWait(WaitStep& step, ThreadId thread = current_thread_id())
      : step_(step), waiter_(thread, Clock::now(), step.request()) {}
  PromiseWait(const PromiseWait&) = delete;
  PromiseWait& operator=(const PromiseWait&) = delete;
  ~PromiseWait() {
    if (step_.cancel(waiter_, nullptr)) ADD_FAILURE() << "a PromiseWait was left queued";
  }

  Outcome Start() { return step_.start(waiter_); }

  // Waits for the next wake-up and resumes the step with it: its outcome (kPending: queued
  // again), or nothing if no wake-up came within `limit`.
  std::optional<Outcome> Settle(std::chrono::nanoseconds limit = kWaitLimit) {
    if (!waiter_.WaitForWakes(wakes_ + 1, limit)) return std::nullopt;
    return step_.resume(waiter_, waiter_.tokens()[wakes_++]);
  }

  // An abort: the step's on_cancelled() if the waiter was still queued; otherwise its wake-up
  // is on the way, and resume_cancelled() acts on it.
  Outcome Cancel() {
    if (step_.cancel(waiter_, nullptr)) return step_.on_cancelled(waiter_);
    EXPECT_TRUE(waiter_.WaitForWakes(wakes_ + 1)) << "a wake-up was lost";
    return step_.resume_cancelled(waiter_, waiter_.tokens()[wakes_++]);
  }

  RecordingWaiter& waiter() { return waiter_; }

 private:
  WaitStep& step_;
  RecordingWaiter waiter_;
  std::size_t wakes_ = 0;
};

// The thread a PromiseStep waits for, where it is not the calling one.
struct OnThread {
  ThreadId thread;
};

// A `Step` made of the given arguments, run as a PromiseWait (on the calling thread, or on the
// one OnThread names). The step is a base, so that it outlives the PromiseWait, which cancels it
// on destruction.
template <typename Step>
struct StepHolder {
  template <typename... Arguments>
  explicit StepHolder(Arguments&&... arguments) : held(std::forward<Arguments>(arguments)...) {}
  Step held;
};
template <typename Step>
class PromiseStep : private StepHolder<Step>, public PromiseWait {
 public:
  template <typename... Arguments>
  explicit PromiseStep(Arguments&&... arguments)
      : PromiseStep(OnThread{current_thread_id()}, std::forward<Arguments>(arguments)...) {}
  template <typename... Arguments>
  PromiseStep(OnThread on, Arguments&&... arguments)
      : StepHolder<Step>(std::forward<Arguments>(arguments)...),
        PromiseWait(this->held, on.thread) {}
  Step& step() { return this->held; }
};

// Runs a `Step` made of `arguments` blocking (wait_blocking()) on a new thread of `threads`, with
// a deadline that outlasts kWaitLimit; its outcome is stored in `outcome`, which the caller
// set to kPending.
template <typename Step, typename... Arguments>
void StartBlockingWait(ThreadGroup& threads, std::atomic<Outcome>& outcome,
                       Arguments... arguments) {
  threads.Start([&outcome, arguments...] {
    Step step(arguments...);
    outcome = wait_blocking(step, Deadline::after_ms(kHangGuardMs));
  });
}

}  // namespace parklock::testing
