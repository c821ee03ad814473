// A point in time after which a wait gives up, or never.
#pragma once

#include <chrono>
#include <cmath>

namespace parklock {

using Clock = std::chrono::steady_clock;

class Deadline {
 public:
  static Deadline never() noexcept { return Deadline(Clock::time_point::max()); }
  static Deadline at(Clock::time_point when) noexcept { return Deadline(when); }

  // A relative timeout in milliseconds, as JavaScript passes it: fractions are kept, and anything
  // beyond what the clock can represent (Infinity included) means never. Negative means now.
  static Deadline after_ms(double ms) noexcept {
    if (!(ms < kMaxMilliseconds)) return never();
    if (ms <= 0) return Deadline(Clock::now());
    return Deadline(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double, std::milli>(ms)));
  }

  bool is_never() const noexcept { return when_ == Clock::time_point::max(); }
  bool expired() const noexcept { return !is_never() && Clock::now() >= when_; }
  Clock::time_point when() const noexcept { return when_; }

 private:
  // About 292 years: far enough that adding it to now() cannot overflow the clock.
  static constexpr double kMaxMilliseconds = 9.2e15;

  explicit Deadline(Clock::time_point when) noexcept : when_(when) {}
  Clock::time_point when_;
};

}  // namespace parklock
