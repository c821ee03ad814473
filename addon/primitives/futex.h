// Futex-style wait/notify on any 32-bit word, through the parking lot.
//
// Shared-memory layout: the caller's word; futex adds nothing to it. wait() sleeps only while the
// word holds `expected` (checked under the bucket lock, so a notify that follows a change of the
// word cannot be missed), and notify() wakes waiters oldest first.
//
// These waiters live in parklock's own queues: Atomics.notify does not wake them, and notify() does
// not wake Atomics.wait. A word should be waited on through one of the two, not both.
//
// Futex waiters have a key space of their own: they queue on key(word), one byte past the word,
// which is never the address of a 4-aligned word that another primitive parks on. So futex calls
// on a Mutex's, Semaphore's or RWLock's word cannot wake that primitive's waiters with a token
// they would read as a grant, nor stand in its queue.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "lot/deadline.h"
#include "lot/parking_lot.h"
#include "lot/wait_step.h"

namespace parklock::futex {

inline const void* key(const std::int32_t* word) noexcept {
  return reinterpret_cast<const char*>(word) + 1;
}

// The token notify() wakes a waiter with.
inline constexpr WakeToken kNotified = 5 * kTokenSpaceSize;

// The primitive's word for a futex key: WaitSite::address of every site on futex keys.
const void* word_of(const void* key) noexcept;

// The site of bare futex waiters. A primitive built on the futex (the latch, the barrier) names
// its own, with word_of as its address, so that diagnostics show what the waiter waits in.
extern const WaitSite kWaitSite;

// A wait for a notify() of `word`, queued only while the word holds `expected`: kAcquired
// (notified) or kNotEqual. A notification is the whole wait, so a cancel that loses the race with
// one still reports it (kAcquired); one that nobody takes goes to the next waiter.
class AwaitStep final : public WaitStep {
 public:
  AwaitStep(const std::int32_t* word, std::int32_t expected) noexcept
      : word_(word), expected_(expected) {}
  Outcome start(Waiter& waiter) override;
  Outcome resume(Waiter& /*waiter*/, WakeToken /*token*/) override { return Outcome::kAcquired; }
  Outcome resume_cancelled(Waiter& waiter, WakeToken token) override {
    return resume(waiter, token);
  }
  void abandon(Waiter& waiter, WakeToken token) noexcept override;

 private:
  const std::int32_t* const word_;
  const std::int32_t expected_;
};

// AwaitStep, blocking: kAcquired, kNotEqual, kTimedOut or kInterrupted.
Outcome wait(const std::int32_t* word, std::int32_t expected,
             Deadline deadline = Deadline::never());

// A wait of a primitive on the futex key of its word until the word shows what the waiter looks
// for (a latch's release, a barrier's next generation), where whoever makes that change notifies
// after it: each look finishes the wait or queues it while the word still holds the value looked
// at, so no wake-up is lost. A wake-up only makes it look again. A cancel is settled by
// on_cancelled(), also one that lost the race with a wake-up; a wake-up that nobody takes goes to
// the next waiter, since it may have been a notify() meant for one.
class ChangeStep : public WaitStep {
 public:
  Outcome resume(Waiter& waiter, WakeToken /*token*/) final { return look(waiter); }
  Outcome resume_cancelled(Waiter& waiter, WakeToken /*token*/) final {
    return on_cancelled(waiter);
  }
  void abandon(Waiter& waiter, WakeToken token) noexcept final;

 protected:
  ChangeStep(const std::int32_t* word, const WaitSite* site) noexcept : word_(word), site_(site) {}

  // How the word's value `seen` (loaded with acquire) ends the wait, or nothing: wait on.
  virtual std::optional<Outcome> finished(std::int32_t seen) const = 0;

  Outcome look(Waiter& waiter);
  // The word now (acquire).
  std::int32_t value() const noexcept;

 private:
  const std::int32_t* const word_;
  const WaitSite* const site_;
};

// WaitSite::look_again of the sites of ChangeSteps (the latch's, the barrier's): the word at a
// futex key changed in another process, and every waiter here looks at it again. The bare futex
// site has none: a notify(count) wakes at most `count` waiters, which waking every waiter of
// another process would break.
void look_again(const void* key) noexcept;

// Queues an asynchronous waiter if the word holds `expected`; false (not queued) otherwise.
bool enqueue_if_equal(const std::int32_t* word, std::int32_t expected, Waiter& waiter,
                      const WaitSite* site = &kWaitSite);

// Wakes up to `count` waiters of `word`; returns how many.
std::size_t notify(const std::int32_t* word, std::size_t count);

// How many futex waiters `word` has (a snapshot: for tests and diagnostics).
std::size_t queued_count(const std::int32_t* word);

}  // namespace parklock::futex
