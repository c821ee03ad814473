// The file that holds a region (across_processes/shared_region.h), as an OS makes, maps, sizes and
// locks it: what shared_region.cpp asks of a file, and nothing of what a region means. POSIX
// (Linux, macOS): region_file_posix.cpp; Windows: region_file_windows.cpp.
//
// Errors are errno numbers (`*error`), Windows's translated to the nearest, so that JavaScript
// names them as node:fs does.
#pragma once

#include <cstdint>
#include <string>

namespace parklock::os {

// An open file: a descriptor, or the bits of a Windows HANDLE. kNoFile is -1 for both (Windows's
// INVALID_HANDLE_VALUE).
using FileHandle = std::intptr_t;
inline constexpr FileHandle kNoFile = -1;

// This process's id.
std::int32_t current_pid() noexcept;

// What a region needs to know of an open file. `device` and `file` together name the file,
// whatever its path: two handles of one file give the same pair.
struct FileFacts {
  std::uint64_t bytes = 0;
  std::uint64_t device = 0;
  std::uint64_t file = 0;
  bool regular = false;  // not a directory, a device, a pipe...
  bool ours = false;     // belongs to the user this process runs as
};
bool facts_of(FileHandle file, FileFacts* facts, int* error) noexcept;

// The file's first `bytes` bytes mapped shared (every process's writes seen by all), writable or
// not; null with `*error`.
void* map_file(FileHandle file, std::uint64_t bytes, bool writable, int* error) noexcept;
void unmap_file(void* base, std::uint64_t bytes) noexcept;

// A second handle of the same open file (kNoFile with `*error`), closed apart from the first.
FileHandle duplicate_file(FileHandle file, int* error) noexcept;
void close_file(FileHandle file) noexcept;

// Makes the file `bytes` long; a longer part reads as zeros (and need not be stored).
bool resize_file(FileHandle file, std::uint64_t bytes, int* error) noexcept;

// Whether the file's bytes from `from` to `to` are all zeros (false if they cannot be read).
// Where the OS tells which extents hold data, only those are read.
bool only_zeros(FileHandle file, std::uint64_t from, std::uint64_t to) noexcept;

// A lock on the whole file that at most one open file (and so one process) holds: taken now, or
// false with `*error` EAGAIN where another holds it. The OS drops it as its holder's last handle
// of the open file closes, its process ending in any way included.
bool try_lock_file(FileHandle file, int* error) noexcept;
void unlock_file(FileHandle file) noexcept;

#if defined(__linux__)
// Open-file-description locks on one byte each (F_OFD_SETLK), which the kernel drops as the open
// file's last descriptor closes, its process ending in any way included, and which no other
// process inherits: the futex_waitv mechanism's liveness (shared_region.h, Identities).
bool try_lock_byte(FileHandle file, std::int64_t byte, int* error) noexcept;
void unlock_byte(FileHandle file, std::int64_t byte) noexcept;
// Whether another open file description holds the lock of `byte` (true where it cannot tell).
bool byte_locked_elsewhere(FileHandle file, std::int64_t byte) noexcept;
#endif

// A new file, open for reading and writing, that appears at a path only once published: unnamed,
// or under `temporary` (`kTemporaryPrefix` + the creator's pid + "-" + a number) in the directory
// of the path it will have, which only its creator uses.
struct NewFile {
  FileHandle file = kNoFile;
  std::string temporary;  // empty: unnamed
};
inline constexpr char kTemporaryPrefix[] = ".parklock-";

enum class Made { kMade, kExists, kUnsupported, kFailed };
// Starts a new file in `directory`, with permissions `mode` (less the umask) where the OS has
// them: unnamed where `unnamed` (kUnsupported where the OS or the file system has no unnamed
// files), else under a temporary name (`number` chooses it).
Made start_file(const std::string& directory, bool unnamed, unsigned mode, std::uint64_t number,
                NewFile* made, int* error) noexcept;
// Gives the new file the name `path`, if nothing has it (else kExists: the caller opens what is
// there); kUnsupported where the file system cannot (no hard links). Published, the file has no
// temporary name any more (the handle stays open, the caller's); otherwise the caller removes it
// with abandon_file() once it has let go of the file (Windows removes no file that is mapped).
Made publish_file(NewFile& made, const char* path, int* error) noexcept;
// Removes the temporary name of a file that will not be published; closes nothing.
void abandon_file(const NewFile& made) noexcept;
// Removes from `directory` the temporary files of creators that died before removing them: those
// named after a process that no longer runs (os/process_start.h).
void remove_dead_creators_files(const std::string& directory) noexcept;

// Makes the file `path`, empty, if nothing has that name (else kNoFile with `*error` EEXIST);
// never follows a symbolic link there.
FileHandle create_exclusive(const char* path, unsigned mode, int* error) noexcept;

// Opens the existing file `path` for reading and writing (kNoFile with `*error`); a symbolic link
// there is refused (ELOOP), never followed. Windows's way in: JavaScript's descriptors there are
// Node's C runtime's, which a separately built addon cannot turn into handles.
FileHandle open_existing(const char* path, int* error) noexcept;

// The directory part of `path` ("." where it has none).
std::string directory_of(const std::string& path);

}  // namespace parklock::os
