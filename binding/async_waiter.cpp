#include "async_waiter.h"

#include "thread_context.h"

namespace parklock::binding {

AsyncWaiter::AsyncWaiter(std::shared_ptr<ThreadContext> context, double id)
    : Waiter(context->thread(), Clock::now()), context_(std::move(context)), id_(id) {}

void AsyncWaiter::on_unparked(WakeToken token) noexcept {
  context_->deliver(*this, token);
}

}  // namespace parklock::binding
