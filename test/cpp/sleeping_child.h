// A child process that sleeps until killed, for the tests of liveness across processes: fork()
// on POSIX; on Windows this test binary started again with PARKLOCK_TEST_SLEEP set, which
// sleeping_child_test.cpp turns into a sleep before any test runs.
#pragma once

#include <cstdint>

#if defined(_WIN32)
#include <cstdlib>
#include <string>

#include "os/windows_api.h"
#else
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#endif

namespace parklock::testing {

class SleepingChild {
 public:
  SleepingChild() {
#if defined(_WIN32)
    wchar_t self[MAX_PATH];
    GetModuleFileNameW(nullptr, self, MAX_PATH);
    std::wstring command = L"\"" + std::wstring(self) + L"\"";
    SetEnvironmentVariableW(L"PARKLOCK_TEST_SLEEP", L"1");
    STARTUPINFOW startup{};
    startup.cb = sizeof(startup);
    PROCESS_INFORMATION started{};
    const BOOL made = CreateProcessW(self, command.data(), nullptr, nullptr, FALSE, 0, nullptr,
                                     nullptr, &startup, &started);
    SetEnvironmentVariableW(L"PARKLOCK_TEST_SLEEP", nullptr);
    if (made == 0) std::abort();
    CloseHandle(started.hThread);
    process_ = started.hProcess;
    pid_ = static_cast<std::int32_t>(started.dwProcessId);
#else
    const pid_t child = fork();
    if (child < 0) std::abort();
    if (child == 0) {
      for (;;) pause();
    }
    pid_ = child;
#endif
  }
  ~SleepingChild() {
    kill();
    reap();
  }
  SleepingChild(const SleepingChild&) = delete;
  SleepingChild& operator=(const SleepingChild&) = delete;

  std::int32_t pid() const {
    return pid_;
  }

  // Kills it (SIGKILL; TerminateProcess), leaving it unreaped: a zombie, or a process object this
  // process still holds.
  void kill() {
    if (killed_) return;
    killed_ = true;
#if defined(_WIN32)
    TerminateProcess(process_, 1);
    WaitForSingleObject(process_, INFINITE);
#else
    ::kill(pid_, SIGKILL);
#endif
  }
  // Lets the system forget it (once killed): its pid may name another process from then on.
  void reap() {
    if (reaped_) return;
    reaped_ = true;
#if defined(_WIN32)
    CloseHandle(process_);
#else
    waitpid(pid_, nullptr, 0);
#endif
  }

 private:
  std::int32_t pid_ = -1;
  bool killed_ = false;
  bool reaped_ = false;
#if defined(_WIN32)
  HANDLE process_ = nullptr;
#endif
};

}  // namespace parklock::testing
