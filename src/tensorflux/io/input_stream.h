// Buffered sequential reads of a local file, plain (read(2)) or gzip-compressed (detected from the
// gzip magic 1f 8b), for the input pipeline's readers (IDX, TFRecord, text lines).
//
// gzip is inflated by ISA-L's igzip (isal_inflate, ~2.5x zlib's inflate), which also checks each
// member's CRC-32 and length. Concatenated members (RFC 1952 §2.2, what `cat a.gz b.gz` makes) read
// as one stream; bytes after the last member that do not start another member (1f 8b) are
// ignored, as zlib's gzread and `gzip -d` do.
//
// Memory is one fixed buffer (kBufferBytes, plus kCompressedBufferBytes and ISA-L's ~100 KiB
// state for a gzip file) whatever the file size: files are streamed, never loaded whole. A Read
// of at least kDirectReadBytes past the buffered bytes goes straight into the destination
// (read(2) of a plain file, with readv() refilling kLookaheadBytes of the buffer in the same
// call; isal_inflate's output for a gzip file), so large reads are never copied twice.
//
// Errors: NOT_FOUND when the file cannot be opened, DATA_LOSS for a read error, a corrupt gzip
// stream (bad header, bad deflate data, CRC-32 or length mismatch) or one cut short; each names
// the file and the (uncompressed) byte offset reached.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tensorflux/core/status.h"

namespace tensorflux {
namespace io {

class InputStream {
 public:
  static constexpr size_t kBufferBytes = 256 << 10;
  static constexpr size_t kCompressedBufferBytes = 128 << 10;
  static constexpr size_t kDirectReadBytes = 32 << 10;
  static constexpr size_t kLookaheadBytes = 4 << 10;

  // Opens `path` for reading; a gzip file is decompressed on the fly, and with `zlib` the file
  // is one zlib stream (TF's compression_type "ZLIB": RFC 1950 header, Adler-32 trailer).
  static StatusOr<std::unique_ptr<InputStream>> Open(const std::string& path, bool zlib = false);
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

  // The bytes buffered and not yet consumed (possibly empty; Read and Fill change them), for
  // readers that parse in place; Consume(k) drops the first k (k <= buffered().size()).
  std::string_view buffered() const { return std::string_view(buf_.get() + pos_, end_ - pos_); }
  void Consume(size_t k) {
    pos_ += k;
    offset_ += static_cast<int64_t>(k);
  }

  // Uncompressed bytes consumed so far.
  int64_t offset() const { return offset_; }
  const std::string& path() const { return path_; }
  bool compressed() const { return gz_ != nullptr; }
  // "file 'PATH' at offset N": the location every reader error message carries.
  std::string Where(int64_t at) const;

 private:
  struct Gzip;  // ISA-L inflate state and the compressed-input buffer (input_stream.cc)

  InputStream(std::string path, int fd, std::unique_ptr<Gzip> gz);
  // Refills the (empty) buffer; false at end of file.
  StatusOr<bool> Fill();
  // Up to n bytes of the file's content into dst (0 only at end of file), bypassing the buffer;
  // a plain file also refills up to `lookahead` bytes of the (empty) buffer in the same call.
  StatusOr<size_t> ReadDirect(char* dst, size_t n, size_t lookahead);
  // read(2) of the file, retried on EINTR; 0 at end of file.
  StatusOr<size_t> RawRead(char* dst, size_t n);
  // Inflates up to n bytes into dst; 0 only at the end of the last member.
  StatusOr<size_t> Inflate(char* dst, size_t n);
  // Refills the compressed-input buffer; false at end of file.
  StatusOr<bool> FillCompressed();

  std::string path_;
  int fd_;
  std::unique_ptr<Gzip> gz_;  // null for a plain file
  std::unique_ptr<char[]> buf_;
  size_t pos_ = 0, end_ = 0;
  int64_t offset_ = 0;
};

}  // namespace io
}  // namespace tensorflux
