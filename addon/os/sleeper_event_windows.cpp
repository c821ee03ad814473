// A doorbell sleeper's wake-up on Windows (sleeper_event.h): WaitOnAddress does not cross
// processes, so each sleeper has an auto-reset event named after the region file's identity and
// its key, in the session's namespace ("Local\"), which only it waits on. A ringer opens it by
// name the first time it wakes that sleeper and keeps the handle until the entry names another;
// a set event stays set until its sleeper's wait takes it, so a wake-up between the sleeper's
// last look and its wait is not lost. An event whose sleeper has gone (its process ended, and
// with it its handle) no longer opens, and one that a ringer still holds open wakes nobody.
#if defined(_WIN32)

#include <cstdio>

#include "os/sleeper_event.h"
#include "os/windows_api.h"

namespace parklock::os {

namespace {

void name_of(const SleeperName& name, wchar_t (&out)[64]) {
  std::swprintf(out, 64, L"Local\\parklock-%016llx-%016llx",
                static_cast<unsigned long long>(name.file_identity),
                static_cast<unsigned long long>(name.key));
}

HANDLE handle_of(std::intptr_t handle) {
  return reinterpret_cast<HANDLE>(handle);
}

}  // namespace

bool OwnSleeperEvent::open(const SleeperName& name) noexcept {
  close();
  wchar_t text[64];
  name_of(name, text);
  const HANDLE event = CreateEventW(nullptr, FALSE, FALSE, text);
  if (event == nullptr) return false;
  handle_ = reinterpret_cast<std::intptr_t>(event);
  return true;
}

void OwnSleeperEvent::close() noexcept {
  if (handle_ != 0) CloseHandle(handle_of(handle_));
  handle_ = 0;
}

void OwnSleeperEvent::wait(const std::uint32_t*, std::chrono::nanoseconds timeout) noexcept {
  WaitForSingleObject(handle_of(handle_), milliseconds_for(timeout));
}

SleeperEvents::~SleeperEvents() {
  for (const Opened& opened : opened_) {
    if (opened.handle != 0) CloseHandle(handle_of(opened.handle));
  }
}

void SleeperEvents::wake(std::size_t entry, const SleeperName& name,
                         const std::uint32_t*) noexcept {
  const std::lock_guard<std::mutex> guard(lock_);
  if (opened_.size() <= entry) opened_.resize(entry + 1);
  Opened& opened = opened_[entry];
  if (opened.key != name.key || opened.handle == 0) {
    if (opened.handle != 0) CloseHandle(handle_of(opened.handle));
    wchar_t text[64];
    name_of(name, text);
    opened.key = name.key;
    opened.handle = reinterpret_cast<std::intptr_t>(OpenEventW(EVENT_MODIFY_STATE, FALSE, text));
  }
  if (opened.handle != 0) SetEvent(handle_of(opened.handle));
}

}  // namespace parklock::os

#endif
