// The two forms of every wait, written once: a core WaitStep (wait_step.h) run blocking, with
// the call's timeout, or for a Promise, with the call's record (passed to onSettle).
//
// blocking_wait<Op> / promise_wait<Op>: Op names its step (Op::Step) and reads the step's
//   constructor arguments from the call (Op::arguments(info, self), which throws on bad ones
//   before anything waits); the timeout or the record is the argument at Op::kLastArg.
//
// blocking_call<Op> / start_async<Op> are the older shape, for waits whose step still lives in
// the binding: Op is constructed from (info, self); blocking, Op::run(BlockingWait&) runs on
// this thread with the deadline of argument Op::kTimeoutArg; for a Promise, Op is the WaitStep
// and Op::kRecordArg names the record.
#pragma once

#include <napi.h>

#include <memory>
#include <tuple>

#include "async_waiter.h"
#include "deadline.h"
#include "outcome.h"
#include "shared_words.h"
#include "thread_context.h"

namespace parklock::binding {

// What a blocking call gives its operation. The thread's termination interrupt is open for the
// whole life of its context (interrupt.h), so every wait polls it without being told.
struct BlockingWait {
  ThreadId self;
  Deadline deadline;
  ThreadId ended = kNoThread;  // set by the operation when it reports kOwnerDied
};

template <typename Op>
Napi::Value blocking_wait(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ThreadContext& context = ThreadContext::of(env);
  auto step = std::make_from_tuple<typename Op::Step>(Op::arguments(info, context.thread()));
  const Outcome outcome = wait_blocking(step, Deadline::after_ms(timeout_ms(info, Op::kLastArg)));
  return context.settled_value(env, outcome, step.ended_owner());
}

template <typename Op>
Napi::Value promise_wait(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ThreadContext& context = ThreadContext::of(env);
  auto step = std::apply(
      [](auto&&... arguments) {
        return std::make_unique<typename Op::Step>(std::forward<decltype(arguments)>(arguments)...);
      },
      Op::arguments(info, context.thread()));
  return context.start(env, info[Op::kLastArg], std::move(step));
}

template <typename Op>
Napi::Value blocking_call(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ThreadContext& context = ThreadContext::of(env);
  Op op(info, context.thread());
  BlockingWait wait{context.thread(), Deadline::after_ms(timeout_ms(info, Op::kTimeoutArg))};
  const Settlement settlement = settlement_of(op.run(wait));
  return context.settled_value(env, settlement, wait.ended);
}

template <typename Op>
Napi::Value start_async(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ThreadContext& context = ThreadContext::of(env);
  auto op = std::make_unique<Op>(info, context.thread());
  return context.start(env, info[Op::kRecordArg], std::move(op));
}

}  // namespace parklock::binding
