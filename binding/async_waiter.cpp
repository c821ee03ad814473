#include "async_waiter.h"

namespace parklock::binding {

AsyncWaiter::AsyncWaiter(std::shared_ptr<WakeSink> sink, ThreadId thread,
                         std::unique_ptr<WaitStep> step)
    : Waiter(step->waiter_thread(thread), Clock::now(), step->request()),
      sink_(std::move(sink)),
      step_(std::move(step)) {}

AsyncWaiter::~AsyncWaiter() {
  if (region_ != nullptr) shared_region::release(region_);
}

void AsyncWaiter::hold_region() noexcept {
  if (!shared_region::any_mapped()) return;
  region_ = shared_region::region_at(address());
  if (region_ != nullptr) shared_region::retain(region_);
}

void AsyncWaiter::on_unparked(WakeToken token) noexcept {
  sink_->deliver(*this, token);
}

}  // namespace parklock::binding
