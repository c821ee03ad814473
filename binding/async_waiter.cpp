#include "async_waiter.h"

#include "settlement.h"
#include "thread_context.h"

namespace parklock::binding {

AsyncWaiter::AsyncWaiter(std::shared_ptr<ThreadContext> context, double id, std::int64_t request)
    : Waiter(context->thread(), Clock::now(), request), context_(std::move(context)), id_(id) {}

std::optional<Settlement> AsyncWaiter::on_cancelled() {
  return settled::kCancelled;
}

Settlement AsyncWaiter::owner_died(ThreadId ended) {
  return context_->report_ended_owner(ended);
}

void AsyncWaiter::on_unparked(WakeToken token) noexcept {
  context_->deliver(*this, token);
}

}  // namespace parklock::binding
