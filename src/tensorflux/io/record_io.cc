#include "tensorflux/io/record_io.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "tensorflux/core/crc32c.h"

namespace tensorflux {
namespace io {
namespace {

void PutLE32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
void PutLE64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
uint32_t GetLE32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}
uint64_t GetLE64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

}  // namespace

std::string EncodeRecordHeader(uint64_t length) {
  std::string h(12, '\0');
  PutLE64(h.data(), length);
  PutLE32(h.data() + 8, crc32c::Mask(crc32c::Value(h.data(), 8)));
  return h;
}

std::string EncodeRecordFooter(std::string_view data) {
  std::string f(4, '\0');
  PutLE32(f.data(), crc32c::Mask(crc32c::Value(data.data(), data.size())));
  return f;
}

StatusOr<std::unique_ptr<RecordReader>> RecordReader::Open(const std::string& path,
                                                           const Options& options) {
  StatusOr<std::unique_ptr<InputStream>> in = InputStream::Open(path, options.zlib);
  if (!in.ok()) return in.status();
  std::unique_ptr<RecordReader> r(new RecordReader());
  r->in_ = std::move(*in);
  r->options_ = options;
  return r;
}

Status RecordReader::ReadFull(void* dst, size_t n, int64_t record_start, const char* what,
                              bool* at_eof) {
  size_t got = 0;
  TX_RETURN_IF_ERROR(in_->Read(dst, n, &got));
  *at_eof = got == 0;
  if (got < n)
    return errors::DataLoss(Where("truncated", record_start), what, " needs ", n,
                            " bytes, the file has ", got);
  return OkStatus();
}

std::string RecordReader::Where(const char* kind, int64_t at) const {
  return absl::StrCat(kind, " record at ", at, " in file '", in_->path(), "': ");
}

bool RecordReader::ReadBufferedRecord(std::string* record) {
  const std::string_view b = in_->buffered();
  if (b.size() < 16) return false;
  const uint64_t length = GetLE64(b.data());
  if (length > b.size() - 16 || length > options_.max_record_bytes) return false;
  const char* data = b.data() + 12;
  if (crc32c::Unmask(GetLE32(b.data() + 8)) != crc32c::Value(b.data(), 8) ||
      crc32c::Unmask(GetLE32(data + length)) != crc32c::Value(data, length))
    return false;  // ReadRecord reports it
  record->assign(data, length);
  in_->Consume(16 + length);
  return true;
}

Status RecordReader::ReadRecord(std::string* record) {
  if (!failed_.ok()) return failed_;
  Status s = ReadNext(record);
  if (!s.ok() && s.code() != absl::StatusCode::kOutOfRange) failed_ = s;
  return s;
}

Status RecordReader::ReadNext(std::string* record) {
  if (!done_ && ReadBufferedRecord(record)) return OkStatus();
  while (true) {
    if (done_) return errors::OutOfRange("end of TFRecord file '", in_->path(), "'");
    const int64_t start = in_->offset();
    char header[12];
    bool eof = false;
    Status s = ReadFull(header, sizeof(header), start, "the 12-byte header", &eof);
    if (!s.ok() && eof && s.code() == absl::StatusCode::kDataLoss) {
      done_ = true;  // clean end: no byte of a next record
      continue;
    }
    const uint64_t length = s.ok() ? GetLE64(header) : 0;
    if (s.ok() && crc32c::Unmask(GetLE32(header + 8)) != crc32c::Value(header, 8))
      s = errors::DataLoss(Where("corrupted", start), "length CRC mismatch");
    if (s.ok() && length > options_.max_record_bytes)
      s = errors::DataLoss(Where("corrupted", start), "the record claims ", length,
                           " bytes, over the limit of ", options_.max_record_bytes);
    if (s.ok()) {
      record->resize(length);
      s = ReadFull(record->data(), length, start, "the data", &eof);
    }
    char footer[4];
    if (s.ok()) s = ReadFull(footer, 4, start, "the data CRC", &eof);
    if (s.ok() && crc32c::Unmask(GetLE32(footer)) != crc32c::Value(record->data(), length)) {
      s = errors::DataLoss(Where("corrupted", start + 12), "data CRC mismatch (the record "
                           "starts at offset ", start, ")");
      if (options_.skip_corrupt) {
        ++corrupt_;  // framing is intact: go on with the next record
        continue;
      }
    }
    if (s.ok()) return s;
    if (!options_.skip_corrupt || s.code() != absl::StatusCode::kDataLoss) return s;
    ++corrupt_;  // framing lost (bad length or truncated): nothing further can be read
    done_ = true;
  }
}

StatusOr<std::unique_ptr<RecordWriter>> RecordWriter::Open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    const std::string why = std::strerror(errno);
    if (errno == EACCES) return errors::PermissionDenied("cannot create '", path, "': ", why);
    return errors::NotFound("cannot create '", path, "': ", why);
  }
  return std::unique_ptr<RecordWriter>(new RecordWriter(path, f));
}

RecordWriter::~RecordWriter() { Close().IgnoreError(); }

Status RecordWriter::WriteRecord(std::string_view data) {
  if (f_ == nullptr) return errors::FailedPrecondition("TFRecord writer for '", path_, "' is closed");
  const std::string header = EncodeRecordHeader(data.size());
  const std::string footer = EncodeRecordFooter(data);
  if (std::fwrite(header.data(), 1, header.size(), f_) != header.size() ||
      std::fwrite(data.data(), 1, data.size(), f_) != data.size() ||
      std::fwrite(footer.data(), 1, footer.size(), f_) != footer.size())
    return errors::Internal("write to '", path_, "' failed: ", std::strerror(errno));
  return OkStatus();
}

Status RecordWriter::Flush() {
  if (f_ != nullptr && std::fflush(f_) != 0)
    return errors::Internal("flush of '", path_, "' failed: ", std::strerror(errno));
  return OkStatus();
}

Status RecordWriter::Close() {
  if (f_ == nullptr) return OkStatus();
  const int rc = std::fclose(f_);
  f_ = nullptr;
  if (rc != 0) return errors::Internal("close of '", path_, "' failed: ", std::strerror(errno));
  return OkStatus();
}

}  // namespace io
}  // namespace tensorflux
