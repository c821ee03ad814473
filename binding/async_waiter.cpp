#include "async_waiter.h"

namespace parklock::binding {

AsyncWaiter::AsyncWaiter(std::shared_ptr<WakeSink> sink, ThreadId thread,
                         std::unique_ptr<AsyncOperation> operation)
    : Waiter(thread, Clock::now(), operation->request()),
      sink_(std::move(sink)),
      operation_(std::move(operation)) {}

AsyncWaiter::~AsyncWaiter() = default;

void AsyncWaiter::on_unparked(WakeToken token) noexcept {
  sink_->deliver(*this, token);
}

}  // namespace parklock::binding
