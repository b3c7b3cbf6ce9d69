// File source datasets (ops/file_dataset_ops.cc): TFRecordDataset, TextLineDataset, CSVDataset,
// IdxDataset.
// Each iterator streams one file at a time through the io/ readers, so memory is one read buffer
// (plus the current record) whatever the file sizes; the exception is an IDX file of at most
// 256 MiB decoded, which is decoded once and kept (IdxPayloadCache). Errors of the readers
// (DATA_LOSS for a truncated or corrupt record, naming the file and offset; NOT_FOUND for a
// missing file) come out of GetNext and are sticky: every later GetNext of that iterator returns
// the same error, never a quiet end of data (TF goes on with the next file after a DATA_LOSS,
// and so ends quietly after the last; docs/TF_DIFFERENCES.md). Under ignore_errors()
// (IteratorContext::errors_are_ignored) TFRecordDataset and TextLineDataset skip the rest of the
// failing file and go on with the next, as TF; IdxDataset (one file) ends.
#include <sys/stat.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tensorflux/data/dataset.h"
#include "tensorflux/io/csv.h"
#include "tensorflux/io/idx_reader.h"
#include "tensorflux/io/input_stream.h"
#include "tensorflux/io/record_io.h"

namespace tensorflux {
namespace {

// ---------------------------------------------------------------- records and lines

// One dataset class for TFRecordDataset (records) and TextLineDataset (lines): scalar strings.
class FileLinesOrRecordsDataset : public DatasetBase {
 public:
  FileLinesOrRecordsDataset(std::vector<std::string> files, bool records, bool zlib)
      : files_(std::move(files)), records_(records), zlib_(zlib) {}

  const DataTypeVector& output_dtypes() const override { return dtypes_; }
  const std::vector<PartialTensorShape>& output_shapes() const override { return shapes_; }
  std::string DebugString() const override {
    return absl::StrCat(records_ ? "TFRecordDatasetOp" : "TextLineDatasetOp", "::Dataset(",
                        absl::StrJoin(files_, ", "), ")");
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public DatasetIterator<FileLinesOrRecordsDataset> {
   public:
    using DatasetIterator::DatasetIterator;
    Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
      if (!failed_.ok()) return failed_;
      Status s = NextValue(out, end);
      if (!s.ok()) {
        records_.reset();  // the rest of this file is not read
        lines_.reset();
        if (!ctx->errors_are_ignored) failed_ = s;  // else the next call opens the next file
      }
      return s;
    }

   private:
    Status NextValue(std::vector<Tensor>* out, bool* end) {
      const FileLinesOrRecordsDataset& d = *dataset();
      std::string value;
      while (true) {
        if (!records_ && !lines_) {
          if (next_file_ >= d.files_.size()) {
            *end = true;
            return OkStatus();
          }
          const std::string& path = d.files_[next_file_++];
          if (d.records_) {
            io::RecordReader::Options options;
            options.zlib = d.zlib_;
            TX_ASSIGN_OR_RETURN(records_, io::RecordReader::Open(path, options));
          } else {
            TX_ASSIGN_OR_RETURN(lines_, io::InputStream::Open(path, d.zlib_));
          }
        }
        Status s = records_ ? records_->ReadRecord(&value) : lines_->ReadLine(&value);
        if (s.ok()) break;
        if (s.code() != absl::StatusCode::kOutOfRange) return s;
        records_.reset();  // this file is done: go on with the next
        lines_.reset();
      }
      out->push_back(Tensor::Scalar<std::string>(std::move(value)));
      return OkStatus();
    }

    Status failed_;  // sticky error (not under ignore_errors)
    size_t next_file_ = 0;
    std::unique_ptr<io::RecordReader> records_;
    std::unique_ptr<io::InputStream> lines_;
  };

  const std::vector<std::string> files_;
  const bool records_;
  const bool zlib_;  // compression_type "ZLIB"
  const DataTypeVector dtypes_ = {DT_STRING};
  const std::vector<PartialTensorShape> shapes_ = {PartialTensorShape::Scalar()};
};

StatusOr<std::vector<std::string>> FileNames(OpKernelContext* ctx, int i) {
  const Tensor& t = ctx->input(i);
  if (t.dtype() != DT_STRING || t.dims() > 1)
    return errors::InvalidArgument("filenames must be a string scalar or vector, got ",
                                   DataTypeString(t.dtype()), " ", t.shape().DebugString());
  std::vector<std::string> files(t.flat<std::string>().begin(), t.flat<std::string>().end());
  for (const std::string& f : files)
    if (f.empty()) return errors::InvalidArgument("filenames holds an empty name");
  return files;
}

// '', 'GZIP' (gzip is detected from the file either way) or 'ZLIB': true for ZLIB.
StatusOr<bool> ParseCompression(const Tensor& compression) {
  if (compression.dims() != 0) return errors::InvalidArgument("compression_type must be a scalar");
  const std::string& c = compression.scalar<std::string>();
  if (!c.empty() && c != "GZIP" && c != "ZLIB")
    return errors::InvalidArgument("Unsupported compression_type: ", c, " ('', 'GZIP' or 'ZLIB')");
  return c == "ZLIB";
}

class FileLinesOrRecordsDatasetOp : public DatasetOpKernel {
 public:
  explicit FileLinesOrRecordsDatasetOp(OpKernelConstruction* ctx)
      : DatasetOpKernel(ctx), records_(def().op() == "TFRecordDataset") {}

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx) override {
    TX_ASSIGN_OR_RETURN(std::vector<std::string> files, FileNames(ctx, 0));
    TX_ASSIGN_OR_RETURN(bool zlib, ParseCompression(ctx->input(1)));
    TX_ASSIGN_OR_RETURN(int64_t buffer_size, ParseScalarInt64(ctx, 2, "buffer_size"));
    if (buffer_size < 0) return errors::InvalidArgument("buffer_size must be >= 0");
    return DatasetPtr(
        std::make_shared<FileLinesOrRecordsDataset>(std::move(files), records_, zlib));
  }

 private:
  const bool records_;
};
REGISTER_KERNEL_BUILDER(Name("TFRecordDataset").Device(DEVICE_CPU), FileLinesOrRecordsDatasetOp);
REGISTER_KERNEL_BUILDER(Name("TextLineDataset").Device(DEVICE_CPU), FileLinesOrRecordsDatasetOp);

// ---------------------------------------------------------------- CSV

class CsvDataset : public DatasetBase {
 public:
  CsvDataset(std::vector<std::string> files, bool zlib, bool header, io::CsvOptions options,
             std::vector<Tensor> defaults)
      : files_(std::move(files)), zlib_(zlib), header_(header), options_(std::move(options)),
        defaults_(std::move(defaults)), dtypes_(options_.types.begin(), options_.types.end()),
        shapes_(options_.types.size(), PartialTensorShape::Scalar()) {}

  const DataTypeVector& output_dtypes() const override { return dtypes_; }
  const std::vector<PartialTensorShape>& output_shapes() const override { return shapes_; }
  std::string DebugString() const override {
    return absl::StrCat("CSVDatasetOp::Dataset(", absl::StrJoin(files_, ", "), ")");
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public DatasetIterator<CsvDataset> {
   public:
    using DatasetIterator::DatasetIterator;
    Status GetNextInternal(IteratorContext*, std::vector<Tensor>* out, bool* end) override {
      const CsvDataset& d = *dataset();
      std::string line;
      while (true) {
        if (!in_) {
          if (next_file_ >= d.files_.size()) {
            *end = true;
            return OkStatus();
          }
          TX_ASSIGN_OR_RETURN(in_, io::InputStream::Open(d.files_[next_file_++], d.zlib_));
          line_ = 0;
          if (d.header_) {
            Status s = in_->ReadLine(&line);
            ++line_;
            if (!s.ok() && s.code() != absl::StatusCode::kOutOfRange) return s;
          }
        }
        Status s = in_->ReadLine(&line);
        if (s.ok()) break;
        if (s.code() != absl::StatusCode::kOutOfRange) return s;
        in_.reset();
      }
      ++line_;
      std::vector<Tensor> values;
      std::vector<Tensor*> ptrs;
      for (DataType dt : d.dtypes_) values.emplace_back(dt, TensorShape());
      for (Tensor& v : values) ptrs.push_back(&v);
      TX_RETURN_IF_ERROR(io::ParseCsvRecord(
          d.options_, line, d.defaults_, ptrs, 0,
          absl::StrCat("file '", in_->path(), "' line ", line_)));
      *out = std::move(values);
      return OkStatus();
    }

   private:
    size_t next_file_ = 0;
    int64_t line_ = 0;
    std::unique_ptr<io::InputStream> in_;
  };

  const std::vector<std::string> files_;
  const bool zlib_;  // compression_type "ZLIB"
  const bool header_;
  const io::CsvOptions options_;
  const std::vector<Tensor> defaults_;
  const DataTypeVector dtypes_;
  const std::vector<PartialTensorShape> shapes_;
};

class CsvDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx) override {
    TX_ASSIGN_OR_RETURN(std::vector<std::string> files, FileNames(ctx, 0));
    TX_ASSIGN_OR_RETURN(bool zlib, ParseCompression(ctx->input(1)));
    TX_ASSIGN_OR_RETURN(bool header, ParseScalarBool(ctx, 3, "header"));
    const Tensor& delim = ctx->input(4);
    if (delim.dims() != 0 || delim.scalar<std::string>().size() != 1)
      return errors::InvalidArgument("field_delim must be a one-character scalar");
    io::CsvOptions options;
    options.delim = delim.scalar<std::string>()[0];
    TX_ASSIGN_OR_RETURN(options.quotes, ParseScalarBool(ctx, 5, "use_quote_delim"));
    if (ctx->input(6).dims() != 0) return errors::InvalidArgument("na_value must be a scalar");
    options.na_value = ctx->input(6).scalar<std::string>();
    const Tensor& select = ctx->input(7);
    if (select.dims() != 1) return errors::InvalidArgument("select_cols must be a vector");
    options.select_cols.assign(select.flat<int64_t>().begin(), select.flat<int64_t>().end());
    options.types.assign(output_types_.begin(), output_types_.end());
    TX_RETURN_IF_ERROR(io::ValidateCsvOptions(options));
    std::vector<Tensor> defaults;
    for (size_t i = 0; i < options.types.size(); ++i) {
      const Tensor& def = ctx->input(8 + static_cast<int>(i));
      if (def.NumElements() > 1)
        return errors::InvalidArgument("record_defaults[", i, "] must have at most one element");
      defaults.push_back(def);
    }
    return DatasetPtr(std::make_shared<CsvDataset>(std::move(files), zlib, header,
                                                   std::move(options), std::move(defaults)));
  }
};
REGISTER_KERNEL_BUILDER(Name("CSVDataset").Device(DEVICE_CPU), CsvDatasetOp);

// ---------------------------------------------------------------- IDX

// Files whose decoded payload is at most this size are decoded once and kept in memory (see
// IdxPayloadCache); larger ones are streamed item by item by every iterator.
constexpr int64_t kMaxDecodedIdxBytes = int64_t{256} << 20;

// What identifies a file's content between two reads: a changed size or mtime means a reload.
struct FileIdentity {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};

bool StatFile(const std::string& path, FileIdentity* id) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return false;
  *id = {st.st_dev, st.st_ino, st.st_size,
         int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec};
  return true;
}

// The decoded payload of one IDX file (all items as one [N] + item shape tensor, host order),
// kept by an IdxDataset kernel and shared by the datasets it makes, and their iterators, while
// the file is unchanged. Elements are dim-0 slices of it (no copy). Each MakeIterator of a TF 1.x
// initializable iterator re-runs the kernel, so the kernel (not the dataset) must keep it for
// the next epoch to find it; it holds one payload, of at most kMaxDecodedIdxBytes.
class IdxPayloadCache {
 public:
  // The payload of `path`, decoded now if the cached one is of another file or version; null
  // when the file cannot be decoded whole (the iterator then streams it and reports the error
  // at the item where it occurs).
  std::shared_ptr<const Tensor> Get(const std::string& path) {
    FileIdentity id;
    if (!StatFile(path, &id)) return nullptr;
    std::lock_guard<std::mutex> l(mu_);
    if (payload_ != nullptr && path == path_ && id == id_) return payload_;
    payload_.reset();  // the old one goes before the new one is decoded
    StatusOr<std::unique_ptr<io::IdxReader>> reader = io::IdxReader::Open(path);
    Tensor all;
    if (!reader.ok() || !(*reader)->ReadAll(&all).ok()) return nullptr;
    path_ = path;
    id_ = id;
    payload_ = std::make_shared<const Tensor>(std::move(all));
    return payload_;
  }

 private:
  std::mutex mu_;
  std::string path_;
  FileIdentity id_;
  std::shared_ptr<const Tensor> payload_;
};

class IdxDataset : public DatasetBase {
 public:
  // `cache` null: always stream.
  IdxDataset(std::string path, DataType dtype, TensorShape item_shape,
             std::shared_ptr<IdxPayloadCache> cache)
      : path_(std::move(path)),
        item_shape_(std::move(item_shape)),
        cache_(std::move(cache)),
        dtypes_({dtype}),
        shapes_({PartialTensorShape(item_shape_)}) {}

  const DataTypeVector& output_dtypes() const override { return dtypes_; }
  const std::vector<PartialTensorShape>& output_shapes() const override { return shapes_; }
  std::string DebugString() const override {
    return absl::StrCat("IdxDatasetOp::Dataset(", path_, ")");
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public DatasetIterator<IdxDataset> {
   public:
    using DatasetIterator::DatasetIterator;
    Status Initialize(IteratorContext*) override {
      const IdxDataset& d = *dataset();
      if (d.cache_ != nullptr) payload_ = d.cache_->Get(d.path_);
      DataType dtype;
      TensorShape shape;
      if (payload_ != nullptr) {
        dtype = payload_->dtype();
        shape = payload_->shape();
        shape.RemoveDim(0);
      } else {
        TX_ASSIGN_OR_RETURN(reader_, io::IdxReader::Open(d.path_));
        dtype = reader_->dtype();
        shape = reader_->item_shape();
      }
      if (dtype != d.dtypes_[0] || shape != d.item_shape_) {
        return errors::InvalidArgument("IDX file '", d.path_, "' changed since the dataset was ",
                                       "made: its items are now ", DataTypeString(dtype), " ",
                                       shape.DebugString(), ", the dataset's ",
                                       DataTypeString(d.dtypes_[0]), " ",
                                       d.item_shape_.DebugString());
      }
      return OkStatus();
    }
    Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
      if (!failed_.ok()) return failed_;
      if (skipped_) {
        *end = true;
        return OkStatus();
      }
      Status s = NextItem(out, end);
      if (!s.ok()) {
        if (ctx->errors_are_ignored) {
          skipped_ = true;
        } else {
          failed_ = s;
        }
      }
      return s;
    }

   private:
    Status NextItem(std::vector<Tensor>* out, bool* end) {
      Tensor item;
      if (payload_ != nullptr) {
        if (next_ >= payload_->dim_size(0)) {
          *end = true;
          return OkStatus();
        }
        item.CopyFrom(payload_->Slice(next_, next_ + 1), dataset()->item_shape_);
        ++next_;
        out->push_back(std::move(item));
        return OkStatus();
      }
      Status s = reader_->ReadItem(&item);
      if (s.code() == absl::StatusCode::kOutOfRange) {
        *end = true;
        return OkStatus();
      }
      TX_RETURN_IF_ERROR(s);
      out->push_back(std::move(item));
      return OkStatus();
    }

    Status failed_;   // sticky error
    bool skipped_ = false;  // an error was ignored (ignore_errors): the one file has ended
    std::shared_ptr<const Tensor> payload_;  // the whole file, or null: streamed by reader_
    int64_t next_ = 0;
    std::unique_ptr<io::IdxReader> reader_;
  };

  const std::string path_;
  const TensorShape item_shape_;
  const std::shared_ptr<IdxPayloadCache> cache_;
  const DataTypeVector dtypes_;
  const std::vector<PartialTensorShape> shapes_;
};

class IdxDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx) override {
    const Tensor& name = ctx->input(0);
    if (name.dims() != 0) return errors::InvalidArgument("filename must be a scalar");
    const std::string& path = name.scalar<std::string>();
    // The header gives the element spec; the base class checks it against the attrs.
    TX_ASSIGN_OR_RETURN(auto reader, io::IdxReader::Open(path));
    int64_t bytes = DataTypeSize(reader->dtype());
    for (int64_t d : reader->dims()) bytes *= d;  // IdxReader bounds the product by 2^50
    return DatasetPtr(std::make_shared<IdxDataset>(
        path, reader->dtype(), reader->item_shape(),
        bytes <= kMaxDecodedIdxBytes ? cache_ : nullptr));
  }

 private:
  const std::shared_ptr<IdxPayloadCache> cache_ = std::make_shared<IdxPayloadCache>();
};
REGISTER_KERNEL_BUILDER(Name("IdxDataset").Device(DEVICE_CPU), IdxDatasetOp);

}  // namespace
}  // namespace tensorflux
