#include "async_waiter.h"

namespace parklock::binding {

AsyncWaiter::AsyncWaiter(std::shared_ptr<WakeSink> sink, ThreadId thread,
                         std::unique_ptr<WaitStep> step)
    : Waiter(step->waiter_thread(thread), Clock::now(), step->request()),
      sink_(std::move(sink)),
      step_(std::move(step)) {}

AsyncWaiter::~AsyncWaiter() = default;

bool AsyncWaiter::regions_intact() const noexcept {
  for (const shared_region::RegionUse& use : regions_) {
    if (use.get() != nullptr && !shared_region::intact(use.get())) return false;
  }
  return true;
}

void AsyncWaiter::hold_regions(const HandleRegions& regions) noexcept {
  for (std::size_t i = 0; i < regions.regions.size(); ++i) {
    regions_[i] = shared_region::RegionUse::another(regions.regions[i]);
  }
}

void AsyncWaiter::on_unparked(WakeToken token) noexcept {
  sink_->deliver(*this, token);
}

}  // namespace parklock::binding
