#include "tensorflux/io/input_stream.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tensorflux {
namespace io {

StatusOr<std::unique_ptr<InputStream>> InputStream::Open(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr)
    return errors::NotFound("cannot open file '", path, "': ", std::strerror(errno));
  gzbuffer(gz, 128 << 10);
  return std::unique_ptr<InputStream>(new InputStream(path, gz));
}

InputStream::InputStream(std::string path, void* gz)
    : path_(std::move(path)), gz_(gz), buf_(new char[kBufferBytes]) {}

InputStream::~InputStream() { gzclose(static_cast<gzFile>(gz_)); }

std::string InputStream::Where(int64_t at) const {
  return absl::StrCat("file '", path_, "' at offset ", at);
}

StatusOr<bool> InputStream::Fill() {
  pos_ = end_ = 0;
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
