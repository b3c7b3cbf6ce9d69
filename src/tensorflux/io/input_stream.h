// Buffered sequential reads of a local file, plain (read(2)) or gzip-compressed (detected from the
// gzip magic 1f 8b, decoded by zlib), for the input pipeline's readers (IDX, TFRecord, text lines).
// Memory is one fixed buffer (kBufferBytes) whatever the file size: files are streamed, never
// loaded whole.
//
// Errors: NOT_FOUND when the file cannot be opened, DATA_LOSS when zlib reports a corrupt or
// truncated gzip stream; each names the file and the (uncompressed) byte offset reached.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "tensorflux/core/status.h"

namespace tensorflux {
namespace io {

class InputStream {
 public:
  static constexpr size_t kBufferBytes = 256 << 10;

  // Opens `path` for reading; a gzip file is decompressed on the fly.
  static StatusOr<std::unique_ptr<InputStream>> Open(const std::string& path);
  ~InputStream();
  InputStream(const InputStream&) = delete;
  InputStream& operator=(const InputStream&) = delete;

  // Copies up to `n` bytes into `dst` and sets `*got` to the count; `*got < n` only at end of file.
  Status Read(void* dst, size_t n, size_t* got);
  // Reads one line without its "\n" (and a "\r" before it). OUT_OF_RANGE at end of file; a last
  // line without a trailing newline is still returned.
  Status ReadLine(std::string* line);
  // Skips `n` bytes; `*got` as for Read.
  Status Skip(size_t n, size_t* got);

  // Uncompressed bytes consumed so far.
  int64_t offset() const { return offset_; }
  const std::string& path() const { return path_; }
  // "file 'PATH' at offset N": the location every reader error message carries.
  std::string Where(int64_t at) const;

 private:
  InputStream(std::string path, int fd, void* gz);
  // Refills the buffer; false at end of file.
  StatusOr<bool> Fill();
  // read(2) of a plain file, retried on EINTR; 0 at end of file.
  StatusOr<int64_t> RawRead(char* dst, size_t n);

  std::string path_;
  int fd_;
  void* gz_;  // gzFile over fd_ for a gzip file, else nullptr
  std::unique_ptr<char[]> buf_;
  size_t pos_ = 0, end_ = 0;
  int64_t offset_ = 0;
};

}  // namespace io
}  // namespace tensorflux
