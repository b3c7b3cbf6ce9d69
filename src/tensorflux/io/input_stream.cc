#include "tensorflux/io/input_stream.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tensorflux {
namespace io {

StatusOr<std::unique_ptr<InputStream>> InputStream::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errors::NotFound("cannot open file '", path, "': ", std::strerror(errno));
  // Plain files are read with read(2) (no zlib copy); gzip files (magic 1f 8b) through zlib.
  unsigned char magic[2] = {0, 0};
  const bool gzip = ::pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  void* gz = nullptr;
  if (gzip) {
    gz = gzdopen(fd, "rb");
    if (gz == nullptr) {
      ::close(fd);
      return errors::ResourceExhausted("cannot start gzip decoding of '", path, "'");
    }
    gzbuffer(static_cast<gzFile>(gz), 128 << 10);
  }
  return std::unique_ptr<InputStream>(new InputStream(path, fd, gz));
}

InputStream::InputStream(std::string path, int fd, void* gz)
    : path_(std::move(path)), fd_(fd), gz_(gz), buf_(new char[kBufferBytes]) {}

InputStream::~InputStream() {
  if (gz_ != nullptr) {
    gzclose(static_cast<gzFile>(gz_));  // closes fd_
  } else {
    ::close(fd_);
  }
}

std::string InputStream::Where(int64_t at) const {
  return absl::StrCat("file '", path_, "' at offset ", at);
}

StatusOr<int64_t> InputStream::RawRead(char* dst, size_t n) {
  while (true) {
    const ssize_t got = ::read(fd_, dst, n);
    if (got >= 0) return static_cast<int64_t>(got);
    if (errno != EINTR)
      return errors::DataLoss("read error in ", Where(offset_), ": ", std::strerror(errno));
  }
}

StatusOr<bool> InputStream::Fill() {
  pos_ = end_ = 0;
  if (gz_ == nullptr) {
    TX_ASSIGN_OR_RETURN(int64_t n, RawRead(buf_.get(), kBufferBytes));
    end_ = static_cast<size_t>(n);
    return n > 0;
  }
  gzFile gz = static_cast<gzFile>(gz_);
  const int n = gzread(gz, buf_.get(), static_cast<unsigned>(kBufferBytes));
  if (n < 0) {
    int code = 0;
    const char* msg = gzerror(gz, &code);
    return errors::DataLoss("corrupt compressed data in ", Where(offset_), ": ", msg);
  }
  if (n == 0) {
    // gzread returns 0 both at a clean end and on a gzip stream cut short.
    int code = 0;
    const char* msg = gzerror(gz, &code);
    if (code != Z_OK && code != Z_BUF_ERROR)
      return errors::DataLoss("corrupt compressed data in ", Where(offset_), ": ", msg);
    if (code == Z_BUF_ERROR)
      return errors::DataLoss("truncated gzip stream in ", Where(offset_));
    return false;
  }
  end_ = static_cast<size_t>(n);
  return true;
}

Status InputStream::Read(void* dst, size_t n, size_t* got) {
  char* out = static_cast<char*>(dst);
  *got = 0;
  while (*got < n) {
    if (pos_ == end_ && gz_ == nullptr && out != nullptr && n - *got >= kBufferBytes) {
      // A large read of a plain file goes straight to the destination.
      TX_ASSIGN_OR_RETURN(int64_t k, RawRead(out + *got, n - *got));
      if (k == 0) break;
      *got += static_cast<size_t>(k);
      offset_ += k;
      continue;
    }
    if (pos_ == end_) {
      StatusOr<bool> more = Fill();
      if (!more.ok()) return more.status();
      if (!*more) break;
    }
    const size_t k = std::min(n - *got, end_ - pos_);
    if (out != nullptr) std::memcpy(out + *got, buf_.get() + pos_, k);
    pos_ += k;
    *got += k;
    offset_ += static_cast<int64_t>(k);
  }
  return OkStatus();
}

Status InputStream::Skip(size_t n, size_t* got) { return Read(nullptr, n, got); }

Status InputStream::ReadLine(std::string* line) {
  line->clear();
  bool any = false;
  while (true) {
    if (pos_ == end_) {
      StatusOr<bool> more = Fill();
      if (!more.ok()) return more.status();
      if (!*more) break;
    }
    any = true;
    const char* begin = buf_.get() + pos_;
    const char* nl = static_cast<const char*>(std::memchr(begin, '\n', end_ - pos_));
    const size_t k = nl ? static_cast<size_t>(nl - begin) : end_ - pos_;
    line->append(begin, k);
    pos_ += k;
    offset_ += static_cast<int64_t>(k);
    if (nl) {
      ++pos_;
      ++offset_;
      if (!line->empty() && line->back() == '\r') line->pop_back();
      return OkStatus();
    }
  }
  if (!any) return errors::OutOfRange("end of file '", path_, "'");
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return OkStatus();
}

}  // namespace io
}  // namespace tensorflux
