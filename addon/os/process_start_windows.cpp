// A process's creation time (os/process_start.h) from GetProcessTimes: 100 ns units since 1601,
// fixed for the process's life. A process that has exited but whose object another handle keeps
// (its parent's, say) is signaled: it has ended.
#if defined(_WIN32)

#include "os/process_start.h"
#include "os/windows_api.h"

namespace parklock::os {

std::uint64_t process_start(std::int32_t pid) noexcept {
  HANDLE process =
      OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE, static_cast<DWORD>(pid));
  if (process == nullptr) {
    // No process has that id (ERROR_INVALID_PARAMETER); another user's, or a protected one, is
    // not ours to judge.
    return GetLastError() == ERROR_INVALID_PARAMETER ? kNoProcess : kStartUnknown;
  }
  std::uint64_t start = kStartUnknown;
  FILETIME created{};
  FILETIME exited{};
  FILETIME kernel{};
  FILETIME user{};
  if (WaitForSingleObject(process, 0) == WAIT_OBJECT_0) {
    start = kNoProcess;
  } else if (GetProcessTimes(process, &created, &exited, &kernel, &user) != 0) {
    start = (std::uint64_t{created.dwHighDateTime} << 32) | created.dwLowDateTime;
    if (start == kNoProcess || start == kStartUnknown) start = 1;
  }
  CloseHandle(process);
  return start;
}

}  // namespace parklock::os

#endif
