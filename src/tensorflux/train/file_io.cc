#include "tensorflux/train/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace tensorflux {

Status IoError(int err, std::string_view what, std::string_view path) {
  const std::string msg = absl::StrCat(std::string(what), " '", std::string(path), "': ",
                                       std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return errors::NotFound(msg);
    case EACCES:
    case EPERM:
    case EROFS:
      return errors::PermissionDenied(msg);
    case ENOSPC:
    case EDQUOT:
      return errors::ResourceExhausted(msg);
    case EISDIR:
    case ENOTEMPTY:
      return errors::FailedPrecondition(msg);  // as TF's errno mapping
    default:
      return errors::Internal(msg);
  }
}

namespace {

std::string TempNameFor(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  const uint64_t salt =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      (counter.fetch_add(1) * 0x9E3779B97F4A7C15ull);
  const std::filesystem::path p(path);
  return (p.parent_path() /
          absl::StrCat(".", p.filename().string(), ".tmp-", ::getpid(), "-", salt % 1000000007))
      .string();
}

std::string DirOf(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

}  // namespace

AtomicFile::~AtomicFile() { Discard(); }

Status AtomicFile::Open() {
  if (fd_ >= 0) return errors::Internal("AtomicFile for '", path_, "' opened twice");
  temp_ = TempNameFor(path_);
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) return IoError(errno, "cannot create temporary file for", path_);
  return OkStatus();
}

Status AtomicFile::Append(std::string_view bytes) {
  if (fd_ < 0) return errors::Internal("AtomicFile for '", path_, "' is not open");
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(errno, "cannot write", temp_);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  size_ += static_cast<int64_t>(bytes.size());
  return OkStatus();
}

Status AtomicFile::Sync() {
  if (fd_ < 0) return errors::Internal("AtomicFile for '", path_, "' is not open");
  if (::fsync(fd_) != 0) return IoError(errno, "cannot fsync", temp_);
  return OkStatus();
}

Status AtomicFile::Commit() {
  TX_RETURN_IF_ERROR(Sync());
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return IoError(errno, "cannot close", temp_);
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp_.c_str());
    return IoError(err, "cannot rename temporary file onto", path_);
  }
  temp_.clear();
  return SyncDirectory(DirOf(path_));
}

void AtomicFile::Discard() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!temp_.empty()) {
    ::unlink(temp_.c_str());
    temp_.clear();
  }
}

StatusOr<int64_t> FileSize(int fd, std::string_view path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return IoError(errno, "cannot stat", path);
  return static_cast<int64_t>(st.st_size);
}

Status ReadAt(int fd, std::string_view path, int64_t offset, size_t n, void* dst) {
  char* out = static_cast<char*>(dst);
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, out + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      return IoError(errno, "cannot read", path);
    }
    if (r == 0)
      return errors::DataLoss("'", path, "' ends at byte ", offset + static_cast<int64_t>(got),
                              ", before the ", n, " bytes at offset ", offset);
    got += static_cast<size_t>(r);
  }
  return OkStatus();
}

Status CheckBoolBytes(const char* data, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (static_cast<unsigned char>(data[i]) > 1)
      return errors::DataLoss("bool element ", i, " holds byte ",
                              static_cast<int>(static_cast<unsigned char>(data[i])));
  return OkStatus();
}

Status SyncDirectory(std::string_view dir) {
  const std::string d(dir);
  const int fd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IoError(errno, "cannot open directory", d);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return IoError(err, "cannot fsync directory", d);
  return OkStatus();
}

}  // namespace tensorflux
