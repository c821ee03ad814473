// The two forms of every wait, written once: a core WaitStep (wait_step.h) run blocking, with
// the call's timeout, or for a Promise, with the call's record (passed to onSettle).
//
// blocking_wait<Op> / promise_wait<Op>: Op names its step (Op::Step) and reads the step's
//   constructor arguments from the call (Op::arguments(info, self), which throws on bad ones
//   before anything waits); the timeout or the record is the argument at Op::kLastArg.
#pragma once

#include <napi.h>

#include <memory>
#include <tuple>
#include <utility>

#include "async_waiter.h"
#include "handle.h"
#include "lot/deadline.h"
#include "shared_words.h"
#include "thread_context.h"

namespace parklock::binding {

template <typename Op>
Napi::Value blocking_wait(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ThreadContext& context = ThreadContext::of(env);
  auto step = std::make_from_tuple<typename Op::Step>(Op::arguments(info, context.thread()));
  Outcome outcome = wait_blocking(step, Deadline::after_ms(timeout_ms(info, Op::kLastArg)));
  if (outcome != Outcome::kInterrupted && !handles_intact(info)) outcome = Outcome::kRegionLost;
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
  return context.start(env, info[Op::kLastArg], std::move(step), regions_of(info));
}

}  // namespace parklock::binding
