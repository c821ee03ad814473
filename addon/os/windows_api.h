// <windows.h> as every Windows file here includes it (the lean API, without the min and max
// macros), and a timeout in the whole milliseconds that its waits take.
#pragma once

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include <chrono>

namespace parklock::os {

// `timeout` rounded up to whole milliseconds (a wait never ends early), short of INFINITE.
inline DWORD milliseconds_for(std::chrono::nanoseconds timeout) {
  if (timeout <= std::chrono::nanoseconds::zero()) return 0;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(timeout).count();
  return ms >= static_cast<long long>(INFINITE) ? INFINITE - 1 : static_cast<DWORD>(ms);
}

}  // namespace parklock::os
#endif
