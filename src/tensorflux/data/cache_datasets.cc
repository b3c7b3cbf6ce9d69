// CacheDataset (TF's CacheDatasetV2 semantics): the elements of the input's first complete pass
// are kept, and later iterators replay them instead of reading the input.
//  - filename '': in memory, shared by the dataset's iterators.
//  - filename F: on disk. The first iterator that finds no complete cache writes every element
//    it yields to a temporary file next to F and, when the input ends, renames it to
//    "F.tfxcache"; a later iterator (of this or any dataset, in any process) that finds
//    "F.tfxcache" reads it and never touches the input. An iterator dropped (or failed) before
//    the end deletes its temporary file, so a partial cache is never used. (TF writes
//    "F.index" + "F_*.data-*" tensor bundles; this file layout is TensorFlux's own.)
// File layout: TFRecord framing (io/record_io.h), so every record is CRC-checked; record 0 is
// "H<magic> <components>", then one record "T<TensorProto>" per component of each element, then
// "E<element count>". A CRC mismatch, a truncated record, an unparsable or out-of-place record,
// or a missing end record is DATA_LOSS naming the file; a tensor whose dtype/shape does not match
// the dataset (a cache of another dataset) is INVALID_ARGUMENT naming the file.
#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <unistd.h>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tensorflux/data/dataset.h"
#include "tensorflux/io/record_io.h"

namespace tensorflux {
namespace {

// ---------------------------------------------------------------- Cache (in memory)

// The elements of the first complete pass, shared by the dataset's later iterators. An
// iterator that stops early (or fails) leaves the cache empty, so the next one reads the input.
struct MemoryCache {
  std::mutex mu;
  bool complete = false;
  std::vector<std::vector<Tensor>> elements;
};

class CacheDataset : public SameSpecDataset {
 public:
  explicit CacheDataset(DatasetPtr input)
      : SameSpecDataset(std::move(input)), cache_(std::make_shared<MemoryCache>()) {}
  std::string DebugString() const override { return "CacheDatasetOp::MemoryDataset"; }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public DatasetIterator<CacheDataset> {
   public:
    using DatasetIterator::DatasetIterator;
    Status Initialize(IteratorContext* ctx) override {
      MemoryCache& c = *dataset()->cache_;
      std::lock_guard<std::mutex> l(c.mu);
      if (c.complete) return OkStatus();  // read from the cache (immutable once complete)
      TX_ASSIGN_OR_RETURN(input_, dataset()->input()->MakeIterator(ctx));
      return OkStatus();
    }
    Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
      MemoryCache& c = *dataset()->cache_;
      if (input_ == nullptr) {
        if (i_ >= static_cast<int64_t>(c.elements.size())) {  // complete: immutable
          *end = true;
          return OkStatus();
        }
        *out = c.elements[i_++];
        return OkStatus();
      }
      TX_RETURN_IF_ERROR(input_->GetNext(ctx, out, end));
      if (!*end) {
        pending_.push_back(*out);
        return OkStatus();
      }
      input_.reset();
      std::lock_guard<std::mutex> l(c.mu);
      if (!c.complete) {
        c.elements = std::move(pending_);
        c.complete = true;
      }
      pending_.clear();
      i_ = INT64_MAX;
      return OkStatus();
    }

   private:
    std::unique_ptr<IteratorBase> input_;  // null when reading the cache
    std::vector<std::vector<Tensor>> pending_;
    int64_t i_ = 0;
  };

  std::shared_ptr<MemoryCache> cache_;
};

// ---------------------------------------------------------------- Cache (file)

constexpr char kCacheMagic[] = "tensorflux.CacheDataset.v1";

class FileCacheDataset : public SameSpecDataset {
 public:
  FileCacheDataset(DatasetPtr input, std::string filename)
      : SameSpecDataset(std::move(input)), path_(std::move(filename) + ".tfxcache") {}
  std::string DebugString() const override {
    return absl::StrCat("CacheDatasetOp::FileDataset(", path_, ")");
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public DatasetIterator<FileCacheDataset> {
   public:
    using DatasetIterator::DatasetIterator;
    ~Iterator() override { AbandonWrite(); }

    Status Initialize(IteratorContext* ctx) override {
      const std::string& path = dataset()->path_;
      std::error_code ec;
      if (std::filesystem::exists(path, ec)) {
        TX_ASSIGN_OR_RETURN(reader_, io::RecordReader::Open(path));
        std::string header;
        TX_RETURN_IF_ERROR(ReadCacheRecord(&header));
        const std::string want = absl::StrCat("H", kCacheMagic, " ", output_dtypes().size());
        if (header != want) return Corrupt("has a bad header record");
        return OkStatus();
      }
      static std::atomic<int64_t> counter{0};
      tmp_path_ = absl::StrCat(path, ".tmp-", ::getpid(), "-", counter++);
      TX_ASSIGN_OR_RETURN(writer_, io::RecordWriter::Open(tmp_path_));
      TX_RETURN_IF_ERROR(
          writer_->WriteRecord(absl::StrCat("H", kCacheMagic, " ", output_dtypes().size())));
      TX_ASSIGN_OR_RETURN(input_, dataset()->input()->MakeIterator(ctx));
      return OkStatus();
    }

    Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
      if (reader_ != nullptr) return ReadElement(out, end);
      if (input_ == nullptr) {  // the pass that wrote the cache has ended
        *end = true;
        return OkStatus();
      }
      Status s = input_->GetNext(ctx, out, end);
      if (s.ok()) s = *end ? FinishWrite() : WriteElement(*out);
      if (!s.ok()) {
        AbandonWrite();  // no partial cache: a retry of GetNext reads on without writing
        return s;
      }
      if (*end) input_.reset();
      return OkStatus();
    }

   private:
    Status Corrupt(const std::string& what) const {
      return errors::DataLoss("cache file '", dataset()->path_, "' ", what,
                              "; delete it to rebuild the cache");
    }
    // The next record; DATA_LOSS (not OUT_OF_RANGE) at the end of the file.
    Status ReadCacheRecord(std::string* record) {
      Status s = reader_->ReadRecord(record);
      if (s.code() == absl::StatusCode::kOutOfRange) return Corrupt("ends before its end record");
      if (!s.ok()) return s;  // DATA_LOSS naming the file and offset
      if (record->empty()) return Corrupt("has an empty record");
      return OkStatus();
    }

    Status ReadElement(std::vector<Tensor>* out, bool* end) {
      if (read_done_) {
        *end = true;
        return OkStatus();
      }
      const DataTypeVector& dtypes = output_dtypes();
      std::string rec;
      for (size_t c = 0; c < dtypes.size(); ++c) {
        TX_RETURN_IF_ERROR(ReadCacheRecord(&rec));
        if (c == 0 && rec[0] == 'E') {
          int64_t n = -1;
          if (!absl::SimpleAtoi(absl::string_view(rec).substr(1), &n) || n != elements_) {
            return Corrupt(absl::StrCat("has an end record '", rec.substr(1), "' after ",
                                        elements_, " elements"));
          }
          read_done_ = true;
          *end = true;
          return OkStatus();
        }
        TensorProto proto;
        if (rec[0] != 'T' || !proto.ParseFromArray(rec.data() + 1, rec.size() - 1)) {
          return Corrupt(absl::StrCat("has a bad tensor record in element ", elements_));
        }
        StatusOr<Tensor> t = Tensor::FromProto(proto);
        if (!t.ok()) return Corrupt(std::string(t.status().message()));
        TX_RETURN_IF_ERROR(CheckElementComponent(
            absl::StrCat("cache file '", dataset()->path_, "' element ", elements_),
            static_cast<int>(c), *t, dtypes[c], output_shapes()[c]));
        out->push_back(*std::move(t));
      }
      ++elements_;
      return OkStatus();
    }

    Status WriteElement(const std::vector<Tensor>& element) {
      if (writer_ == nullptr) return OkStatus();  // an earlier error abandoned the write
      for (const Tensor& t : element) {
        TensorProto proto;
        t.AsProtoTensorContent(&proto);
        TX_RETURN_IF_ERROR(writer_->WriteRecord("T" + proto.SerializeAsString()));
      }
      ++elements_;
      return OkStatus();
    }

    Status FinishWrite() {
      if (writer_ == nullptr) return OkStatus();
      TX_RETURN_IF_ERROR(writer_->WriteRecord(absl::StrCat("E", elements_)));
      TX_RETURN_IF_ERROR(writer_->Close());
      writer_.reset();
      std::error_code ec;
      std::filesystem::rename(tmp_path_, dataset()->path_, ec);  // atomic: all or nothing
      if (ec) {
        return errors::Internal("cannot rename cache file '", tmp_path_, "' to '",
                                dataset()->path_, "': ", ec.message());
      }
      tmp_path_.clear();
      return OkStatus();
    }

    void AbandonWrite() {
      if (writer_ != nullptr) writer_->Close().IgnoreError();
      writer_.reset();
      if (!tmp_path_.empty()) {
        std::error_code ec;
        std::filesystem::remove(tmp_path_, ec);
        tmp_path_.clear();
      }
    }

    std::unique_ptr<IteratorBase> input_;       // writing: the input
    std::unique_ptr<io::RecordWriter> writer_;  // writing: the temporary file
    std::string tmp_path_;
    std::unique_ptr<io::RecordReader> reader_;  // reading a complete cache
    bool read_done_ = false;
    int64_t elements_ = 0;  // elements read or written so far
  };

  const std::string path_;
};

class CacheDatasetOp : public UnaryDatasetOpKernel {
 public:
  using UnaryDatasetOpKernel::UnaryDatasetOpKernel;

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx, DatasetPtr input) override {
    const Tensor& f = ctx->input(1);
    if (f.dtype() != DT_STRING || f.dims() != 0) {
      return errors::InvalidArgument("filename must be a string scalar, got ",
                                     f.shape().DebugString());
    }
    const std::string& filename = f.scalar<std::string>();
    if (filename.empty()) return DatasetPtr(std::make_shared<CacheDataset>(std::move(input)));
    return DatasetPtr(std::make_shared<FileCacheDataset>(std::move(input), filename));
  }
};

REGISTER_KERNEL_BUILDER(Name("CacheDataset").Device(DEVICE_CPU), CacheDatasetOp);

}  // namespace
}  // namespace tensorflux
