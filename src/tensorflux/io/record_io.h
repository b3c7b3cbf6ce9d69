// TFRecord files, TensorFlow's record framing (spec/tf-wire.md §2): each record is
//   uint64 length (little-endian) | uint32 masked CRC-32C of the 8 length bytes |
//   length data bytes | uint32 masked CRC-32C of the data.
// The reader streams (memory is the stream buffer plus the largest record) and also reads
// gzip-compressed files (TF's compression_type "GZIP"), detected from the gzip magic. Record data
// is copied once, into the caller's string: from the stream buffer (CRC checked in place) for a
// record that is buffered whole, else read (or inflated) straight into the string when large
// (InputStream::kDirectReadBytes).
//
// Errors name the file and an offset as TensorFlow's reader does ("<kind> record at OFFSET"):
//  - a header or payload cut short by the end of file -> DATA_LOSS "truncated record at S"
//    (S: the record's first byte). TF reports a cut header as a quiet end of file instead; here
//    it is DATA_LOSS too (docs/TF_DIFFERENCES.md);
//  - a length CRC mismatch (or an oversized length) -> DATA_LOSS "corrupted record at S";
//  - a data CRC mismatch -> DATA_LOSS "corrupted record at S + 12" (the data's first byte, as
//    TF);
//  - a clean end of file (no byte of a next record) -> OUT_OF_RANGE.
// An error is sticky: every later ReadRecord returns the same status (TF's reader retries the
// same offset and fails the same way), never a quiet end of file after it.
// With Options::skip_corrupt, a record whose data CRC fails is skipped and counted
// (corrupt_records()) and reading goes on with the next record; a bad length CRC or a truncated
// record cannot be resynchronized, so it is counted and ends the file (OUT_OF_RANGE).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "tensorflux/core/status.h"
#include "tensorflux/io/input_stream.h"

namespace tensorflux {
namespace io {

class RecordReader {
 public:
  struct Options {
    bool skip_corrupt = false;
    // Records longer than this are DATA_LOSS (a corrupt length that passed its CRC by chance
    // must not allocate terabytes).
    uint64_t max_record_bytes = uint64_t{1} << 31;
    // The file is one zlib stream (TF's compression_type "ZLIB"); gzip is detected either way.
    bool zlib = false;
  };
  static StatusOr<std::unique_ptr<RecordReader>> Open(const std::string& path,
                                                      const Options& options);
  static StatusOr<std::unique_ptr<RecordReader>> Open(const std::string& path) {
    return Open(path, Options());
  }

  // Reads the next record's data into `*record`. After an error, returns that error again.
  Status ReadRecord(std::string* record);

  int64_t corrupt_records() const { return corrupt_; }
  // Offset of the next record.
  int64_t offset() const { return in_->offset(); }
  const std::string& path() const { return in_->path(); }

 private:
  RecordReader() = default;
  // The common case: the whole record is in the stream's buffer and both CRCs match. It is
  // checked in place and copied once into *record; false (nothing consumed) otherwise.
  bool ReadBufferedRecord(std::string* record);
  // Reads exactly n bytes; DATA_LOSS naming `what` and the record offset if the file ends first.
  Status ReadFull(void* dst, size_t n, int64_t record_start, const char* what, bool* at_eof);
  Status ReadNext(std::string* record);
  // "<kind> record at <at> in file '<path>': " (TF's wording and offsets, then the file).
  std::string Where(const char* kind, int64_t at) const;

  std::unique_ptr<InputStream> in_;
  Options options_;
  int64_t corrupt_ = 0;
  bool done_ = false;
  Status failed_;  // the first error, returned by every later ReadRecord
};

// Writes uncompressed TFRecord files.
class RecordWriter {
 public:
  // Creates (truncates) `path`; PERMISSION_DENIED / NOT_FOUND style errors name the file.
  static StatusOr<std::unique_ptr<RecordWriter>> Open(const std::string& path);
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  Status WriteRecord(std::string_view data);
  Status Flush();
  // Flushes and closes; later writes fail. Called by the destructor if not called before.
  Status Close();

 private:
  RecordWriter(std::string path, std::FILE* f) : path_(std::move(path)), f_(f) {}
  std::string path_;
  std::FILE* f_;
};

// The 12-byte header and 4-byte footer of one record (exposed for tests and tools).
std::string EncodeRecordHeader(uint64_t length);
std::string EncodeRecordFooter(std::string_view data);

}  // namespace io
}  // namespace tensorflux
