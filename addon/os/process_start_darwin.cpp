// proc_pidinfo(PROC_PIDTBSDINFO) (os/process_start.h): the start time to the microsecond, and
// the status, SZOMB for a process that ended and awaits its parent's wait().
#if defined(__APPLE__)

#include <libproc.h>
#include <sys/proc.h>
#include <sys/proc_info.h>

#include <cerrno>

#include "os/process_start.h"

namespace parklock::os {

std::uint64_t process_start(std::int32_t pid) noexcept {
  if (pid <= 0) return kNoProcess;
  struct proc_bsdinfo info {};
  const int got = proc_pidinfo(pid, PROC_PIDTBSDINFO, 0, &info, sizeof(info));
  if (got != static_cast<int>(sizeof(info))) return errno == ESRCH ? kNoProcess : kStartUnknown;
  if (info.pbi_status == SZOMB) return kNoProcess;
  return static_cast<std::uint64_t>(info.pbi_start_tvsec) * 1000000u +
         static_cast<std::uint64_t>(info.pbi_start_tvusec) + 1;
}

}  // namespace parklock::os

#endif
