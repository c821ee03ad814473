// The two shapes every waiting entry point has, written once:
//
// blocking_call<Op>: reads Op's arguments from the call (Op's constructor), then runs
//   Op::run(BlockingWait&) on this thread until it settles, with the call's deadline.
//   Op::kTimeoutArg names the timeout argument.
// start_async<Op>: reads Op's arguments the same way and starts an asynchronous wait run by Op
//   (an AsyncOperation) for the record object at Op::kRecordArg.
//
// Each Op's constructor takes (const Napi::CallbackInfo&, ThreadId self) and throws on bad
// arguments before anything waits.
#pragma once

#include <napi.h>

#include <memory>

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
