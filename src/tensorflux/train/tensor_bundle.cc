#include "tensorflux/train/tensor_bundle.h"

#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>

#include "absl/strings/str_format.h"
#include "leveldb/env.h"
#include "leveldb/iterator.h"
#include "leveldb/options.h"
#include "leveldb/table.h"
#include "leveldb/table_builder.h"
#include "tensorflux/core/crc32c.h"

namespace tensorflux {

static_assert(std::endian::native == std::endian::little,
              "tensor bundles store little-endian bytes; this code copies them as they are");

namespace {

// TensorFlow's kTensorBundleVersion (producer) and the oldest bundle this reader understands.
constexpr int32_t kBundleVersion = 1;

absl::string_view AsAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// Rejects what this format layer cannot store or read, with the reason.
Status CheckStorableDtype(DataType dt, std::string_view key) {
  if (dt == DT_STRING) return OkStatus();
  return VisitPodType(dt, absl::StrCat("tensor bundle (tensor '", AsAbsl(key), "')"),
                      [](auto) { return OkStatus(); });
}

// A string element's length as TF's checksum covers it: 4 bytes (LE) when it fits, else 8.
uint32_t ExtendWithLength(uint32_t crc, uint64_t len) {
  if (len <= std::numeric_limits<uint32_t>::max()) {
    const uint32_t len32 = static_cast<uint32_t>(len);
    return crc32c::Extend(crc, &len32, sizeof(len32));
  }
  return crc32c::Extend(crc, &len, sizeof(len));
}

void PutVarint64(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// TF's on-disk layout of a DT_STRING tensor: the elements' lengths as varint64s, the masked
// CRC32C of those lengths (each as 4 LE bytes, 8 when larger than 2^32 - 1), then the bytes of
// every element back to back. `crc` (unmasked) covers the lengths so, the length checksum's 4
// bytes and the elements' bytes.
std::string EncodeStrings(const Tensor& t, uint32_t* crc) {
  const std::string* strings = t.data<std::string>();
  const int64_t n = t.NumElements();
  std::string out;
  *crc = 0;
  for (int64_t i = 0; i < n; ++i) {
    PutVarint64(&out, strings[i].size());
    *crc = ExtendWithLength(*crc, strings[i].size());
  }
  const uint32_t length_checksum = crc32c::Mask(*crc);
  out.append(reinterpret_cast<const char*>(&length_checksum), sizeof(length_checksum));
  *crc = crc32c::Extend(*crc, &length_checksum, sizeof(length_checksum));
  for (int64_t i = 0; i < n; ++i) {
    out += strings[i];
    *crc = crc32c::Extend(*crc, strings[i].data(), strings[i].size());
  }
  return out;
}

// The inverse of EncodeStrings for `t` (allocated, DT_STRING) from exactly `bytes`; false when
// the bytes do not hold t's elements or a checksum does not match (`why` says which).
bool DecodeStrings(std::string_view bytes, uint32_t masked_crc, Tensor* t, std::string* why) {
  std::string* strings = t->data<std::string>();
  const int64_t n = t->NumElements();
  size_t pos = 0;
  uint32_t crc = 0;
  std::vector<uint64_t> lengths(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    uint64_t v = 0;
    int shift = 0;
    while (true) {
      if (pos >= bytes.size() || shift > 63) {
        *why = "the string lengths are truncated or malformed";
        return false;
      }
      const uint8_t b = static_cast<uint8_t>(bytes[pos++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) break;
      shift += 7;
    }
    lengths[static_cast<size_t>(i)] = v;
    crc = ExtendWithLength(crc, v);
  }
  uint32_t length_checksum = 0;
  if (bytes.size() - pos < sizeof(length_checksum)) {
    *why = "the string lengths' checksum is missing";
    return false;
  }
  std::memcpy(&length_checksum, bytes.data() + pos, sizeof(length_checksum));
  pos += sizeof(length_checksum);
  if (length_checksum != crc32c::Mask(crc)) {
    *why = "the string lengths' checksum does not match";
    return false;
  }
  crc = crc32c::Extend(crc, &length_checksum, sizeof(length_checksum));
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t len = lengths[static_cast<size_t>(i)];
    if (len > bytes.size() - pos) {
      *why = "the string bytes are truncated";
      return false;
    }
    strings[i].assign(bytes.data() + pos, static_cast<size_t>(len));
    crc = crc32c::Extend(crc, bytes.data() + pos, static_cast<size_t>(len));
    pos += static_cast<size_t>(len);
  }
  if (pos != bytes.size()) {
    *why = absl::StrCat(bytes.size() - pos, " bytes follow the last string");
    return false;
  }
  if (crc32c::Mask(crc) != masked_crc) {
    *why = absl::StrFormat("checksum does not match: stored 0x%08x vs. calculated 0x%08x",
                           masked_crc, crc32c::Mask(crc));
    return false;
  }
  return true;
}

// leveldb::TableBuilder writes through this into an AtomicFile; the first error is kept.
class AtomicFileSink : public leveldb::WritableFile {
 public:
  explicit AtomicFileSink(AtomicFile* f) : file_(f) {}
  leveldb::Status Append(const leveldb::Slice& data) override {
    Status s = file_->Append(std::string_view(data.data(), data.size()));
    if (s.ok()) return leveldb::Status::OK();
    if (error_.ok()) error_ = s;
    return leveldb::Status::IOError(std::string(s.message()));
  }
  leveldb::Status Close() override { return leveldb::Status::OK(); }
  leveldb::Status Flush() override { return leveldb::Status::OK(); }
  leveldb::Status Sync() override { return leveldb::Status::OK(); }
  const Status& error() const { return error_; }

 private:
  AtomicFile* file_;
  Status error_;
};

leveldb::ReadOptions CheckedReads() {
  leveldb::ReadOptions r;
  r.verify_checksums = true;
  r.fill_cache = false;
  return r;
}

// Writes P.index: the header (endianness and version filled in here) under "", then `entries`
// in key order, atomically.
template <typename EntryMap>
Status WriteIndex(const std::string& prefix, BundleHeaderProto header, const EntryMap& entries) {
  AtomicFile index(BundleIndexFilename(prefix));
  TX_RETURN_IF_ERROR(index.Open());
  AtomicFileSink sink(&index);
  leveldb::Options options;
  options.compression = leveldb::kNoCompression;  // TensorFlow writes uncompressed blocks
  leveldb::TableBuilder builder(options, &sink);
  header.set_endianness(BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(kBundleVersion);
  builder.Add("", header.SerializeAsString());
  for (const auto& [key, entry] : entries) builder.Add(key, entry.SerializeAsString());
  const leveldb::Status ls = builder.Finish();
  TX_RETURN_IF_ERROR(sink.error());
  if (!ls.ok()) return errors::Internal("writing '", index.path(), "': ", ls.ToString());
  return index.Commit();
}

}  // namespace

std::string BundleIndexFilename(std::string_view prefix) {
  return absl::StrCat(AsAbsl(prefix), ".index");
}

std::string BundleDataFilename(std::string_view prefix, int shard_id, int num_shards) {
  return absl::StrFormat("%s.data-%05d-of-%05d", AsAbsl(prefix), shard_id, num_shards);
}

// ---------------------------------------------------------------- BundleWriter

BundleWriter::BundleWriter(std::string prefix) : prefix_(std::move(prefix)) {
  data_ = std::make_unique<AtomicFile>(BundleDataFilename(prefix_, 0, 1));
  const std::filesystem::path dir = std::filesystem::path(prefix_).parent_path();
  std::error_code ec;
  if (!dir.empty() && !std::filesystem::is_directory(dir, ec)) {
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      status_ = IoError(ec.value(), "cannot create the directory of checkpoint", prefix_);
      return;
    }
  }
  status_ = data_->Open();
}

BundleWriter::~BundleWriter() = default;  // AtomicFile removes an uncommitted temporary

Status BundleWriter::Add(std::string_view key, const Tensor& t) {
  if (!status_.ok()) return status_;
  TX_RETURN_IF_ERROR(CheckStorableDtype(t.dtype(), key));
  BundleEntryProto entry;
  entry.set_dtype(t.dtype());
  t.shape().AsProto(entry.mutable_shape());
  if (t.dtype() == DT_STRING) {
    uint32_t crc = 0;
    const std::string bytes = EncodeStrings(t, &crc);
    entry.set_crc32c(crc32c::Mask(crc));
    return AppendBytes(key, std::move(entry), bytes);
  }
  const std::string_view bytes(static_cast<const char*>(t.raw_data()), t.TotalBytes());
  entry.set_crc32c(crc32c::Mask(crc32c::Value(bytes.data(), bytes.size())));
  return AppendBytes(key, std::move(entry), bytes);
}

Status BundleWriter::AppendBytes(std::string_view key, BundleEntryProto entry,
                                 std::string_view bytes) {
  if (finished_) return errors::FailedPrecondition("bundle '", prefix_, "' is already finished");
  if (key.empty()) return errors::InvalidArgument("tensor bundle keys must not be empty");
  if (entries_.find(key) != entries_.end())
    return errors::InvalidArgument("tensor '", key, "' added twice to bundle '", prefix_, "'");
  entry.set_shard_id(0);
  entry.set_offset(data_->size());
  entry.set_size(static_cast<int64_t>(bytes.size()));
  status_ = data_->Append(bytes);
  TX_RETURN_IF_ERROR(status_);
  entries_.emplace(std::string(key), std::move(entry));
  return OkStatus();
}

Status BundleWriter::Finish() {
  if (finished_) return errors::FailedPrecondition("bundle '", prefix_, "' is already finished");
  finished_ = true;
  TX_RETURN_IF_ERROR(status_);
  status_ = data_->Commit();
  TX_RETURN_IF_ERROR(status_);

  BundleHeaderProto header;
  header.set_num_shards(1);
  status_ = WriteIndex(prefix_, header, entries_);
  return status_;
}

// ---------------------------------------------------------------- BundleReader

StatusOr<std::unique_ptr<BundleReader>> BundleReader::Open(std::string prefix) {
  std::unique_ptr<BundleReader> r(new BundleReader());
  r->prefix_ = std::move(prefix);
  const std::string path = BundleIndexFilename(r->prefix_);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return errors::NotFound("checkpoint index '", path, "' not found (no tensor bundle with "
                            "prefix '", r->prefix_, "')");
  leveldb::Env* env = leveldb::Env::Default();
  uint64_t size = 0;
  leveldb::Status ls = env->GetFileSize(path, &size);
  if (ls.ok() && size == 0) return errors::DataLoss("checkpoint index '", path, "' is empty");
  leveldb::RandomAccessFile* file = nullptr;
  if (ls.ok()) ls = env->NewRandomAccessFile(path, &file);
  if (!ls.ok()) return errors::Internal("cannot open '", path, "': ", ls.ToString());
  r->index_file_.reset(file);

  leveldb::Options options;
  options.paranoid_checks = true;  // verify the index block's checksum too
  leveldb::Table* table = nullptr;
  ls = leveldb::Table::Open(options, file, size, &table);
  if (!ls.ok())
    return errors::DataLoss("'", path, "' is not a tensor bundle index: ", ls.ToString());
  r->table_.reset(table);

  std::unique_ptr<leveldb::Iterator> it(r->table_->NewIterator(CheckedReads()));
  it->SeekToFirst();
  if (!it->Valid() || !it->key().empty()) {
    return errors::DataLoss("'", path, "' has no bundle header (empty first key)",
                            it->status().ok() ? "" : ": ", it->status().ToString());
  }
  const leveldb::Slice v = it->value();
  if (!r->header_.ParseFromArray(v.data(), static_cast<int>(v.size())))
    return errors::DataLoss("'", path, "': the bundle header does not parse");
  const BundleHeaderProto& h = r->header_;
  if (h.num_shards() < 1 || h.num_shards() > 100000)
    return errors::DataLoss("'", path, "': bad shard count ", h.num_shards());
  if (h.endianness() == BundleHeaderProto::BIG)
    return errors::Unimplemented("'", path, "' is a big-endian bundle; only little-endian ones "
                                 "are read");
  if (h.endianness() != BundleHeaderProto::LITTLE)
    return errors::DataLoss("'", path, "': unknown endianness ", h.endianness());
  if (h.version().min_consumer() > kBundleVersion)
    return errors::Unimplemented("'", path, "' needs a bundle reader of version ",
                                 h.version().min_consumer(), " or newer (this is ",
                                 kBundleVersion, ")");
  for (int bad : h.version().bad_consumers())
    if (bad == kBundleVersion)
      return errors::Unimplemented("'", path, "' disallows bundle reader version ", bad);
  r->shard_fds_.assign(static_cast<size_t>(h.num_shards()), -1);
  r->shard_sizes_.assign(static_cast<size_t>(h.num_shards()), 0);
  return r;
}

BundleReader::~BundleReader() {
  for (int fd : shard_fds_)
    if (fd >= 0) ::close(fd);
}

StatusOr<BundleEntryProto> BundleReader::LookupEntry(std::string_view key) const {
  if (key.empty()) return errors::InvalidArgument("tensor names in a bundle are not empty");
  std::unique_ptr<leveldb::Iterator> it(table_->NewIterator(CheckedReads()));
  it->Seek(leveldb::Slice(key.data(), key.size()));
  if (!it->status().ok())
    return errors::DataLoss("reading '", BundleIndexFilename(prefix_), "': ",
                            it->status().ToString());
  if (!it->Valid() || it->key() != leveldb::Slice(key.data(), key.size()))
    return errors::NotFound("Key '", key, "' not found in checkpoint '", prefix_, "'");
  BundleEntryProto entry;
  const leveldb::Slice v = it->value();
  if (!entry.ParseFromArray(v.data(), static_cast<int>(v.size())))
    return errors::DataLoss("checkpoint '", prefix_, "': the entry of '", key,
                            "' does not parse");
  return entry;
}

StatusOr<int> BundleReader::ShardFd(int shard_id) const {
  int& fd = shard_fds_[static_cast<size_t>(shard_id)];
  if (fd >= 0) return fd;
  const std::string path = BundleDataFilename(prefix_, shard_id, header_.num_shards());
  const int opened = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (opened < 0) {
    if (errno == ENOENT)
      return errors::DataLoss("checkpoint '", prefix_, "': data file '", path, "' is missing");
    return IoError(errno, "cannot open", path);
  }
  auto size = FileSize(opened, path);
  if (!size.ok()) {
    ::close(opened);
    return size.status();
  }
  shard_sizes_[static_cast<size_t>(shard_id)] = *size;
  fd = opened;
  return fd;
}

std::string BundleReader::Where(std::string_view key) const {
  return absl::StrCat("checkpoint '", prefix_, "', tensor '", AsAbsl(key), "'");
}

StatusOr<TensorShape> BundleReader::CheckEntry(std::string_view key,
                                               const BundleEntryProto& entry) const {
  if (entry.slices_size() > 0)
    return errors::Unimplemented(Where(key), " is partitioned (sliced); sliced tensors are not "
                                 "supported");
  if (!DataType_IsValid(entry.dtype()) || entry.dtype() == DT_INVALID)
    return errors::DataLoss(Where(key), ": invalid dtype ", static_cast<int>(entry.dtype()));
  TX_RETURN_IF_ERROR(CheckStorableDtype(entry.dtype(), key));
  auto shape = TensorShape::FromProto(entry.shape());
  if (!shape.ok()) return errors::DataLoss(Where(key), ": bad shape: ", shape.status().message());
  if (entry.dtype() == DT_STRING) {
    // At least one length byte per element and the lengths' 4-byte checksum.
    if (entry.size() < 4 || entry.size() - 4 < shape->num_elements())
      return errors::DataLoss(Where(key), ": stored size ", entry.size(), " bytes is too small "
                              "for string", shape->DebugString());
  } else {
    const int64_t esize = static_cast<int64_t>(DataTypeSize(entry.dtype()));
    if (shape->num_elements() > std::numeric_limits<int64_t>::max() / esize)
      return errors::DataLoss(Where(key), ": shape ", shape->DebugString(), " is too large");
    const int64_t want = shape->num_elements() * esize;
    if (entry.size() != want)
      return errors::DataLoss(Where(key), ": stored size ", entry.size(), " bytes but ",
                              DataTypeString(entry.dtype()), shape->DebugString(), " needs ",
                              want);
  }
  if (entry.shard_id() < 0 || entry.shard_id() >= header_.num_shards())
    return errors::DataLoss(Where(key), ": shard id ", entry.shard_id(), " outside [0, ",
                            header_.num_shards(), ")");
  TX_RETURN_IF_ERROR(ShardFd(entry.shard_id()).status());
  const int64_t shard_size = shard_sizes_[static_cast<size_t>(entry.shard_id())];
  if (entry.offset() < 0 || entry.offset() > shard_size ||
      entry.size() > shard_size - entry.offset())
    return errors::DataLoss(Where(key), ": bytes [", entry.offset(), ", +", entry.size(),
                            ") lie outside its data file of ", shard_size, " bytes");
  return *std::move(shape);
}

Status BundleReader::ReadChecked(std::string_view key, const BundleEntryProto& entry,
                                 char* dst) const {
  TX_ASSIGN_OR_RETURN(int fd, ShardFd(entry.shard_id()));
  const size_t n = static_cast<size_t>(entry.size());
  TX_RETURN_IF_ERROR(ReadAt(fd, BundleDataFilename(prefix_, entry.shard_id(), header_.num_shards()),
                            entry.offset(), n, dst));
  const uint32_t crc = crc32c::Mask(crc32c::Value(dst, n));
  if (crc != entry.crc32c())
    return errors::DataLoss(Where(key), ": checksum does not match: stored ",
                            absl::StrFormat("0x%08x", entry.crc32c()),
                            " vs. calculated on the restored bytes ",
                            absl::StrFormat("0x%08x", crc));
  if (entry.dtype() == DT_BOOL) {
    Status s = CheckBoolBytes(dst, n);
    if (!s.ok()) return errors::DataLoss(Where(key), ": ", s.message());
  }
  return OkStatus();
}

StatusOr<Tensor> BundleReader::Lookup(std::string_view key) const {
  TX_ASSIGN_OR_RETURN(BundleEntryProto entry, LookupEntry(key));
  TX_ASSIGN_OR_RETURN(TensorShape shape, CheckEntry(key, entry));
  TX_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(entry.dtype(), shape));
  if (entry.dtype() == DT_STRING) {
    TX_ASSIGN_OR_RETURN(int fd, ShardFd(entry.shard_id()));
    std::string bytes(static_cast<size_t>(entry.size()), '\0');
    TX_RETURN_IF_ERROR(ReadAt(fd, BundleDataFilename(prefix_, entry.shard_id(),
                                                     header_.num_shards()),
                              entry.offset(), bytes.size(), bytes.data()));
    std::string why;
    if (!DecodeStrings(bytes, entry.crc32c(), &t, &why))
      return errors::DataLoss(Where(key), ": ", why);
    return t;
  }
  TX_RETURN_IF_ERROR(ReadChecked(key, entry, static_cast<char*>(t.raw_data())));
  return t;
}

Status BundleReader::ForEachEntry(
    const std::function<Status(const std::string& key, const BundleEntryProto& entry)>& fn) const {
  std::unique_ptr<leveldb::Iterator> it(table_->NewIterator(CheckedReads()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (it->key().empty()) continue;  // the header
    const std::string key = it->key().ToString();
    BundleEntryProto entry;
    const leveldb::Slice v = it->value();
    if (!entry.ParseFromArray(v.data(), static_cast<int>(v.size())))
      return errors::DataLoss("checkpoint '", prefix_, "': the entry of '", key,
                              "' does not parse");
    TX_RETURN_IF_ERROR(fn(key, entry));
  }
  if (!it->status().ok())
    return errors::DataLoss("reading '", BundleIndexFilename(prefix_), "': ",
                            it->status().ToString());
  return OkStatus();
}

// ---------------------------------------------------------------- MergeBundles

Status MergeBundles(const std::vector<std::string>& src_prefixes, const std::string& dst_prefix,
                    bool allow_missing) {
  std::vector<std::unique_ptr<BundleReader>> readers;
  for (const std::string& src : src_prefixes) {
    if (src == dst_prefix)
      return errors::InvalidArgument("MergeV2Checkpoints: destination '", dst_prefix,
                                     "' is also a source");
    auto r = BundleReader::Open(src);
    if (!r.ok() && absl::IsNotFound(r.status())) {
      if (allow_missing) continue;
      return errors::InvalidArgument("allow_missing_files was set to false and ", src,
                                     " did not exist.", r.status().ToString());
    }
    TX_RETURN_IF_ERROR(r.status());
    readers.push_back(*std::move(r));
  }
  if (readers.empty())
    return errors::InvalidArgument("MergeV2Checkpoints: no checkpoint to merge into '",
                                   dst_prefix, "'");
  // Check everything before moving anything.
  std::map<std::string, BundleEntryProto> merged;
  int num_shards = 0;
  for (const auto& r : readers) {
    const int shard_base = num_shards;
    TX_RETURN_IF_ERROR(r->ForEachEntry([&](const std::string& key, const BundleEntryProto& e) {
      TX_RETURN_IF_ERROR(r->CheckEntry(key, e).status());
      BundleEntryProto moved = e;
      moved.set_shard_id(shard_base + e.shard_id());
      if (!merged.emplace(key, std::move(moved)).second)
        return errors::InvalidArgument("MergeV2Checkpoints: tensor '", key,
                                       "' is in more than one checkpoint (again in '",
                                       r->prefix(), "')");
      return OkStatus();
    }));
    num_shards += r->header().num_shards();
  }
  if (num_shards > 100000)
    return errors::InvalidArgument("MergeV2Checkpoints: ", num_shards, " shards are too many");
  int shard = 0;
  for (const auto& r : readers) {
    for (int i = 0; i < r->header().num_shards(); ++i, ++shard) {
      const std::string from = BundleDataFilename(r->prefix(), i, r->header().num_shards());
      const std::string to = BundleDataFilename(dst_prefix, shard, num_shards);
      if (::rename(from.c_str(), to.c_str()) != 0)
        return IoError(errno, absl::StrCat("cannot rename '", from, "' to"), to);
    }
  }
  BundleHeaderProto header;
  header.set_num_shards(num_shards);
  TX_RETURN_IF_ERROR(WriteIndex(dst_prefix, header, merged));
  for (const auto& r : readers) {
    const std::string index = BundleIndexFilename(r->prefix());
    if (::unlink(index.c_str()) != 0 && errno != ENOENT)
      return IoError(errno, "cannot delete merged checkpoint index", index);
  }
  return OkStatus();
}

}  // namespace tensorflux
