#include "async_waiter.h"

namespace parklock::binding {

bool AsyncOperation::remove(AsyncWaiter& waiter, parking_lot::Wakeups* deferred) noexcept {
  return parking_lot::cancel(
      waiter, [](const void*) -> const parking_lot::Grant* { return nullptr; }, deferred);
}

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
