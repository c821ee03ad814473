// A region's file on Linux and macOS (region_file.h).
#include "os/region_file.h"

#if defined(__linux__) || defined(__APPLE__)
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include "os/process_start.h"

#ifndef SEEK_DATA
#define SEEK_DATA 3  // Linux's, where the C library's headers do not say it
#endif

namespace parklock::os {

namespace {

int fd_of(FileHandle file) {
  return static_cast<int>(file);
}

}  // namespace

std::int32_t current_pid() noexcept {
  return static_cast<std::int32_t>(getpid());
}

bool facts_of(FileHandle file, FileFacts* facts, int* error) noexcept {
  struct stat info {};
  if (fstat(fd_of(file), &info) != 0) {
    *error = errno;
    return false;
  }
  facts->bytes = static_cast<std::uint64_t>(info.st_size);
  facts->device = static_cast<std::uint64_t>(info.st_dev);
  facts->file = static_cast<std::uint64_t>(info.st_ino);
  facts->regular = S_ISREG(info.st_mode);
  facts->ours = info.st_uid == geteuid();
  return true;
}

void* map_file(FileHandle file, std::uint64_t bytes, bool writable, int* error) noexcept {
  void* base = mmap(nullptr, bytes, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED,
                    fd_of(file), 0);
  if (base == MAP_FAILED) {
    *error = errno;
    return nullptr;
  }
  return base;
}

void unmap_file(void* base, std::uint64_t bytes) noexcept {
  munmap(base, bytes);
}

FileHandle duplicate_file(FileHandle file, int* error) noexcept {
  const int fd = fcntl(fd_of(file), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) *error = errno;
  return fd < 0 ? kNoFile : fd;
}

void close_file(FileHandle file) noexcept {
  close(fd_of(file));
}

bool resize_file(FileHandle file, std::uint64_t bytes, int* error) noexcept {
  if (ftruncate(fd_of(file), static_cast<off_t>(bytes)) == 0) return true;
  *error = errno;
  return false;
}

// Past `from`, only the file's data extents are read (SEEK_DATA): holes read as zeros.
bool only_zeros(FileHandle file, std::uint64_t from, std::uint64_t to) noexcept {
  std::array<std::uint8_t, 65536> chunk;
  auto at = static_cast<off_t>(from);
  while (static_cast<std::uint64_t>(at) < to) {
    const off_t data = lseek(fd_of(file), at, SEEK_DATA);
    if (data < 0) return errno == ENXIO;  // no data past `at`
    const ssize_t got = pread(fd_of(file), chunk.data(), chunk.size(), data);
    if (got <= 0) return got == 0;
    if (!std::all_of(chunk.data(), chunk.data() + got, [](std::uint8_t b) { return b == 0; })) {
      return false;
    }
    at = data + got;
  }
  return true;
}

bool try_lock_file(FileHandle file, int* error) noexcept {
  if (flock(fd_of(file), LOCK_EX | LOCK_NB) == 0) return true;
  *error = errno == EWOULDBLOCK ? EAGAIN : errno;
  return false;
}

void unlock_file(FileHandle file) noexcept {
  flock(fd_of(file), LOCK_UN);
}

#if defined(__linux__)
namespace {

bool byte_lock(FileHandle file, std::int64_t byte, short type) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = byte;
  lock.l_len = 1;
  return fcntl(fd_of(file), F_OFD_SETLK, &lock) == 0;
}

}  // namespace

bool try_lock_byte(FileHandle file, std::int64_t byte, int* error) noexcept {
  if (byte_lock(file, byte, F_WRLCK)) return true;
  *error = errno;
  return false;
}

void unlock_byte(FileHandle file, std::int64_t byte) noexcept {
  byte_lock(file, byte, F_UNLCK);
}

bool byte_locked_elsewhere(FileHandle file, std::int64_t byte) noexcept {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = byte;
  lock.l_len = 1;
  if (fcntl(fd_of(file), F_OFD_GETLK, &lock) != 0) return true;  // cannot tell: assume held
  return lock.l_type != F_UNLCK;
}
#endif

Made start_file(const std::string& directory, bool unnamed, unsigned mode, std::uint64_t number,
                NewFile* made, int* error) noexcept {
  int fd;
  made->temporary.clear();
  if (unnamed) {
#if defined(O_TMPFILE)
    fd = open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
      return Made::kUnsupported;
    }
    // Linked through /proc (publish_file()).
    if (fd >= 0 && access("/proc/self/fd", F_OK) != 0) {
      close(fd);
      return Made::kUnsupported;
    }
#else
    return Made::kUnsupported;
#endif
  } else {
    // A short name, so that a long target name does not make it too long.
    made->temporary = directory + "/" + kTemporaryPrefix + std::to_string(getpid()) + "-" +
                      std::to_string(number % 1000000007u);
    fd = open(made->temporary.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) made->temporary.clear();
  }
  if (fd < 0) {
    *error = errno;
    return Made::kFailed;
  }
  made->file = fd;
  return Made::kMade;
}

Made publish_file(NewFile& made, const char* path, int* error) noexcept {
  int linked;
  if (made.temporary.empty()) {
    const std::string self = "/proc/self/fd/" + std::to_string(fd_of(made.file));
    linked = linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path, AT_SYMLINK_FOLLOW);
  } else {
    linked = link(made.temporary.c_str(), path);
  }
  const int link_error = errno;
  if (linked == 0) {
    abandon_file(made);
    made.temporary.clear();
    return Made::kMade;
  }
  *error = link_error;
  if (link_error == EEXIST) return Made::kExists;
  // No hard links on this file system (the unnamed way's /proc was checked as it started).
  const bool no_links = link_error == EPERM || link_error == EXDEV || link_error == EOPNOTSUPP ||
                        link_error == EMLINK;
  return !made.temporary.empty() && no_links ? Made::kUnsupported : Made::kFailed;
}

void abandon_file(const NewFile& made) noexcept {
  if (!made.temporary.empty()) unlink(made.temporary.c_str());
}

void remove_dead_creators_files(const std::string& directory) noexcept {
  DIR* listing = opendir(directory.c_str());
  if (listing == nullptr) return;
  const std::size_t prefix = sizeof(kTemporaryPrefix) - 1;
  while (const dirent* entry = readdir(listing)) {
    const std::string name = entry->d_name;
    if (name.compare(0, prefix, kTemporaryPrefix) != 0) continue;
    const std::size_t dash = name.find('-', prefix);
    if (dash == std::string::npos || dash == prefix) continue;
    const std::string digits = name.substr(prefix, dash - prefix);
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) continue;
    if (process_start(std::stoi(digits)) != kNoProcess) continue;
    unlinkat(dirfd(listing), entry->d_name, 0);
  }
  closedir(listing);
}

FileHandle create_exclusive(const char* path, unsigned mode, int* error) noexcept {
  const int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) *error = errno;
  return fd < 0 ? kNoFile : fd;
}

FileHandle open_existing(const char* path, int* error) noexcept {
  const int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) *error = errno;
  return fd < 0 ? kNoFile : fd;
}

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace parklock::os

#endif
