// /proc/<pid>/stat (os/process_start.h): field 22 is the start time in clock ticks since boot,
// field 3 the state. The command name (field 2) is in parentheses and may hold any byte, spaces
// and parentheses included, so the fields are counted from its last ')'.
#if defined(__linux__)

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "os/process_start.h"

namespace parklock::os {

std::uint64_t process_start(std::int32_t pid) noexcept {
  // Without /proc every process would read as ended, and every holder as dead.
  static const bool have_proc = access("/proc/self/stat", R_OK) == 0;
  if (!have_proc) return kStartUnknown;
  if (pid <= 0) return kNoProcess;
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || errno == ESRCH ? kNoProcess : kStartUnknown;
  char text[1024];
  const ssize_t got = read(fd, text, sizeof(text) - 1);
  close(fd);
  if (got <= 0) return got == 0 || errno == ESRCH ? kNoProcess : kStartUnknown;
  text[got] = '\0';
  const char* field = std::strrchr(text, ')');
  if (field == nullptr) return kStartUnknown;
  // After ')': " S ppid ..." — field 3, the state, then 18 more fields to the start time.
  ++field;
  while (*field == ' ') ++field;
  const char state = *field;
  if (state == 'Z' || state == 'X' || state == 'x') return kNoProcess;
  for (int skipped = 0; skipped < 19; ++skipped) {
    field = std::strchr(field, ' ');
    if (field == nullptr) return kStartUnknown;
    ++field;
  }
  char* end = nullptr;
  const unsigned long long start = std::strtoull(field, &end, 10);
  if (end == field) return kStartUnknown;
  // Ticks since boot: 0 is a process started at boot, which kNoProcess must not be mistaken for.
  return static_cast<std::uint64_t>(start) + 1;
}

}  // namespace parklock::os

#endif
