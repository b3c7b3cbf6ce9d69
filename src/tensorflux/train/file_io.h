// Small POSIX file helpers for checkpoint writers and readers: atomic replacement of a file and
// positional reads, with errors as Status values naming the path.
//
// OS errors map to canonical codes: ENOENT/ENOTDIR -> NOT_FOUND, EACCES/EPERM/EROFS ->
// PERMISSION_DENIED, ENOSPC/EDQUOT -> RESOURCE_EXHAUSTED, anything else -> INTERNAL.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tensorflux/core/status.h"

namespace tensorflux {

// "<what> '<path>': <strerror(err)>" with the code for `err`.
Status IoError(int err, std::string_view what, std::string_view path);

// A file written under a temporary name in the destination's directory
// ("<dir>/.<name>.tmp-<pid>-<random>") and renamed onto the destination by Commit(): fsync of
// the data, close, rename, fsync of the directory. Until Commit() the destination is untouched,
// so a crash at any point leaves either the old file or the complete new one. A file destroyed
// without Commit() deletes its temporary.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path) : path_(std::move(path)) {}
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Creates the temporary file.
  Status Open();
  Status Append(std::string_view bytes);
  // Bytes appended so far.
  int64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_; }
  // Flush to disk without renaming (used by the crash tests and Commit()).
  Status Sync();
  Status Commit();
  // Closes and deletes the temporary (no-op after Commit()).
  void Discard();

 private:
  std::string path_, temp_;
  int fd_ = -1;
  int64_t size_ = 0;
};

// The size of the open file `fd` (fstat).
StatusOr<int64_t> FileSize(int fd, std::string_view path);
// Reads exactly `n` bytes at `offset` into `dst`. DATA_LOSS when the file ends first.
Status ReadAt(int fd, std::string_view path, int64_t offset, size_t n, void* dst);
// DATA_LOSS when one of `n` bool bytes is neither 0 nor 1 (a bool holding 2 is undefined
// behaviour in C++, so checkpoint readers check before handing such data to kernels).
Status CheckBoolBytes(const char* data, size_t n);
// fsync of a directory (after a rename into it). Errors are returned, not ignored.
Status SyncDirectory(std::string_view dir);

}  // namespace tensorflux
