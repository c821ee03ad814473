// A region's file on Windows (region_file.h). Files are opened sharing reading, writing and
// deletion, as POSIX files are, so that another process may open, map or remove the file while
// this one has it. Permissions are the directory's inherited ACL: `mode` is not used.
// A mapped file cannot be made shorter on Windows (SetEndOfFile fails), so the truncation that a
// POSIX region guards against (shared_region.h, Integrity) is refused by the system here.
#if defined(_WIN32)

#include <algorithm>
#include <array>
#include <cerrno>
#include <string>

#include "os/process_start.h"
#include "os/region_file.h"
#include "os/windows_api.h"

namespace parklock::os {

namespace {

HANDLE handle_of(FileHandle file) {
  return reinterpret_cast<HANDLE>(file);
}

FileHandle file_of(HANDLE handle) {
  return reinterpret_cast<FileHandle>(handle);
}

// The errno (the C runtime's numbering, as Node's os.constants.errno has it) nearest to a
// Windows error.
int errno_of(DWORD error) {
  switch (error) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_DRIVE:
      return ENOENT;
    case ERROR_ACCESS_DENIED:
      return EACCES;
    case ERROR_FILE_EXISTS:
    case ERROR_ALREADY_EXISTS:
      return EEXIST;
    case ERROR_LOCK_VIOLATION:
    case ERROR_SHARING_VIOLATION:
      return EAGAIN;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
    case ERROR_COMMITMENT_LIMIT:
      return ENOMEM;
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL:
      return ENOSPC;
    case ERROR_INVALID_NAME:
    case ERROR_INVALID_PARAMETER:
      return EINVAL;
    case ERROR_FILENAME_EXCED_RANGE:
      return ENAMETOOLONG;
    case ERROR_CANT_RESOLVE_FILENAME:
      return ELOOP;
    case ERROR_DIRECTORY:
      return ENOTDIR;
    case ERROR_NOT_SUPPORTED:
    case ERROR_INVALID_FUNCTION:
      return ENOTSUP;
    case ERROR_TOO_MANY_OPEN_FILES:
      return EMFILE;
    default:
      return EIO;
  }
}

bool failed(int* error) {
  *error = errno_of(GetLastError());
  return false;
}

std::wstring wide(const std::string& text) {
  if (text.empty()) return {};
  const int length =
      MultiByteToWideChar(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), nullptr, 0);
  std::wstring out(static_cast<std::size_t>(std::max(length, 0)), L'\0');
  if (length > 0) {
    MultiByteToWideChar(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), out.data(), length);
  }
  return out;
}

constexpr DWORD kShareAll = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;

// Opens or makes `path` for reading and writing; a symbolic link (a reparse point) at `path` is
// opened as itself, never followed, and refused with ELOOP, as O_NOFOLLOW does.
FileHandle open_file(const std::string& path, DWORD disposition, int* error) {
  const HANDLE handle =
      CreateFileW(wide(path).c_str(), GENERIC_READ | GENERIC_WRITE | DELETE, kShareAll, nullptr,
                  disposition, FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  if (handle == INVALID_HANDLE_VALUE) {
    failed(error);
    // A directory opens only for backup semantics: say what it is, as POSIX's open(2) does.
    const DWORD attributes = GetFileAttributesW(wide(path).c_str());
    if (*error == EACCES && attributes != INVALID_FILE_ATTRIBUTES &&
        (attributes & FILE_ATTRIBUTE_DIRECTORY) != 0) {
      *error = EISDIR;
    }
    return kNoFile;
  }
  FILE_ATTRIBUTE_TAG_INFO tag{};
  if (GetFileInformationByHandleEx(handle, FileAttributeTagInfo, &tag, sizeof(tag)) != 0 &&
      (tag.FileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0) {
    CloseHandle(handle);
    *error = ELOOP;
    return kNoFile;
  }
  return file_of(handle);
}

// A byte far past any region's end: Windows's byte-range locks are mandatory for ReadFile and
// WriteFile (not for mappings), so the lock covers no byte anybody reads or writes.
constexpr std::uint64_t kLockedByte = std::uint64_t{1} << 62;

}  // namespace

std::int32_t current_pid() noexcept {
  return static_cast<std::int32_t>(GetCurrentProcessId());
}

bool facts_of(FileHandle file, FileFacts* facts, int* error) noexcept {
  BY_HANDLE_FILE_INFORMATION info{};
  if (GetFileInformationByHandle(handle_of(file), &info) == 0) return failed(error);
  facts->bytes = (std::uint64_t{info.nFileSizeHigh} << 32) | info.nFileSizeLow;
  facts->device = info.dwVolumeSerialNumber;
  facts->file = (std::uint64_t{info.nFileIndexHigh} << 32) | info.nFileIndexLow;
  facts->regular = GetFileType(handle_of(file)) == FILE_TYPE_DISK &&
                   (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) == 0;
  // Whoever could open it for writing may use it: the file's ACL decided.
  facts->ours = true;
  return true;
}

void* map_file(FileHandle file, std::uint64_t bytes, bool writable, int* error) noexcept {
  const HANDLE mapping =
      CreateFileMappingW(handle_of(file), nullptr, writable ? PAGE_READWRITE : PAGE_READONLY,
                         static_cast<DWORD>(bytes >> 32), static_cast<DWORD>(bytes), nullptr);
  if (mapping == nullptr) {
    failed(error);
    return nullptr;
  }
  void* base = MapViewOfFile(mapping, writable ? FILE_MAP_READ | FILE_MAP_WRITE : FILE_MAP_READ, 0,
                             0, static_cast<SIZE_T>(bytes));
  if (base == nullptr) failed(error);
  // The view keeps the mapping.
  CloseHandle(mapping);
  return base;
}

void unmap_file(void* base, std::uint64_t) noexcept {
  UnmapViewOfFile(base);
}

FileHandle duplicate_file(FileHandle file, int* error) noexcept {
  HANDLE copy = nullptr;
  if (DuplicateHandle(GetCurrentProcess(), handle_of(file), GetCurrentProcess(), &copy, 0, FALSE,
                      DUPLICATE_SAME_ACCESS) == 0) {
    failed(error);
    return kNoFile;
  }
  return file_of(copy);
}

void close_file(FileHandle file) noexcept {
  CloseHandle(handle_of(file));
}

bool resize_file(FileHandle file, std::uint64_t bytes, int* error) noexcept {
  FILE_END_OF_FILE_INFO end{};
  end.EndOfFile.QuadPart = static_cast<LONGLONG>(bytes);
  if (SetFileInformationByHandle(handle_of(file), FileEndOfFileInfo, &end, sizeof(end)) == 0) {
    return failed(error);
  }
  return true;
}

// Reads every byte: a region's file is at most 1 GiB and this runs only on a file without the
// magic, before it is repaired.
bool only_zeros(FileHandle file, std::uint64_t from, std::uint64_t to) noexcept {
  std::array<std::uint8_t, 65536> chunk;
  std::uint64_t at = from;
  while (at < to) {
    OVERLAPPED where{};
    where.Offset = static_cast<DWORD>(at);
    where.OffsetHigh = static_cast<DWORD>(at >> 32);
    DWORD got = 0;
    const auto want = static_cast<DWORD>(std::min<std::uint64_t>(chunk.size(), to - at));
    if (ReadFile(handle_of(file), chunk.data(), want, &got, &where) == 0) {
      return GetLastError() == ERROR_HANDLE_EOF;
    }
    if (got == 0) return true;
    if (!std::all_of(chunk.data(), chunk.data() + got, [](std::uint8_t b) { return b == 0; })) {
      return false;
    }
    at += got;
  }
  return true;
}

bool try_lock_file(FileHandle file, int* error) noexcept {
  OVERLAPPED where{};
  where.Offset = static_cast<DWORD>(kLockedByte);
  where.OffsetHigh = static_cast<DWORD>(kLockedByte >> 32);
  if (LockFileEx(handle_of(file), LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0,
                 &where) != 0) {
    return true;
  }
  failed(error);
  if (*error == EIO || *error == EAGAIN) *error = EAGAIN;  // ERROR_LOCK_VIOLATION, or IO_PENDING
  return false;
}

void unlock_file(FileHandle file) noexcept {
  OVERLAPPED where{};
  where.Offset = static_cast<DWORD>(kLockedByte);
  where.OffsetHigh = static_cast<DWORD>(kLockedByte >> 32);
  UnlockFileEx(handle_of(file), 0, 1, 0, &where);
}

Made start_file(const std::string& directory, bool unnamed, unsigned, std::uint64_t number,
                NewFile* made, int* error) noexcept {
  made->temporary.clear();
  if (unnamed) return Made::kUnsupported;  // Windows has no unnamed files
  const std::string temporary = directory + "\\" + kTemporaryPrefix +
                                std::to_string(current_pid()) + "-" +
                                std::to_string(number % 1000000007u);
  const FileHandle file = open_file(temporary, CREATE_NEW, error);
  if (file == kNoFile) return Made::kFailed;
  made->file = file;
  made->temporary = temporary;
  return Made::kMade;
}

// MoveFileExW without MOVEFILE_REPLACE_EXISTING fails where the name exists: of two creators one
// wins, as link(2) makes it on POSIX. The creator's handle stays open across the rename (it was
// opened sharing deletion, which a rename needs).
Made publish_file(NewFile& made, const char* path, int* error) noexcept {
  if (MoveFileExW(wide(made.temporary).c_str(), wide(path).c_str(), 0) != 0) {
    made.temporary.clear();
    return Made::kMade;
  }
  const DWORD why = GetLastError();
  *error = errno_of(why);
  if (why == ERROR_ALREADY_EXISTS || why == ERROR_FILE_EXISTS) return Made::kExists;
  return why == ERROR_NOT_SUPPORTED ? Made::kUnsupported : Made::kFailed;
}

void abandon_file(const NewFile& made) noexcept {
  if (!made.temporary.empty()) DeleteFileW(wide(made.temporary).c_str());
}

void remove_dead_creators_files(const std::string& directory) noexcept {
  const std::string pattern = directory + "\\" + kTemporaryPrefix + "*";
  WIN32_FIND_DATAW found{};
  const HANDLE listing = FindFirstFileW(wide(pattern).c_str(), &found);
  if (listing == INVALID_HANDLE_VALUE) return;
  const std::size_t prefix = sizeof(kTemporaryPrefix) - 1;
  do {
    const std::wstring name = found.cFileName;
    const std::size_t dash = name.find(L'-', prefix);
    if (dash == std::wstring::npos || dash == prefix) continue;
    const std::wstring digits = name.substr(prefix, dash - prefix);
    if (digits.find_first_not_of(L"0123456789") != std::wstring::npos || digits.size() > 9) {
      continue;
    }
    if (process_start(std::stoi(digits)) != kNoProcess) continue;
    DeleteFileW((wide(directory) + L"\\" + name).c_str());
  } while (FindNextFileW(listing, &found) != 0);
  FindClose(listing);
}

FileHandle create_exclusive(const char* path, unsigned, int* error) noexcept {
  return open_file(path, CREATE_NEW, error);
}

FileHandle open_existing(const char* path, int* error) noexcept {
  return open_file(path, OPEN_EXISTING, error);
}

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.find_last_of("/\\");
  if (slash == std::string::npos) return ".";
  // "C:\" and "\" keep their separator: the root itself.
  if (slash == 0 || (slash == 2 && path[1] == ':')) return path.substr(0, slash + 1);
  return path.substr(0, slash);
}

}  // namespace parklock::os

#endif
