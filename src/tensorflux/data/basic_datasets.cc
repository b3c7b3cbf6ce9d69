// Transformations that keep the element spec: TakeDataset, SkipDataset, RepeatDataset,
// ShardDataset, IgnoreErrorsDataset, and the options datasets OptimizeDatasetV2 and
// MaxIntraOpParallelismDataset (CacheDataset: cache_datasets.cc). TF's semantics: take/skip
// with a negative count take/skip everything; repeat with a negative count repeats forever (and
// ends when an epoch of the input is empty); shard keeps elements index, index + num_shards, ...
// The options datasets pass their input's elements through and set tf.data options
// (DatasetOptions) for every iterator below them.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>

#include "absl/strings/str_cat.h"
#include "tensorflux/data/dataset.h"

namespace tensorflux {
namespace {

// ---------------------------------------------------------------- Take / Skip

class TakeSkipDataset : public SameSpecDataset {
 public:
  TakeSkipDataset(DatasetPtr input, int64_t count, bool skip)
      : SameSpecDataset(std::move(input)), count_(count), skip_(skip) {}
  std::string DebugString() const override {
    return absl::StrCat(skip_ ? "SkipDatasetOp" : "TakeDatasetOp", "::Dataset(", count_, ")");
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public UnaryDatasetIterator<TakeSkipDataset> {
   public:
    using UnaryDatasetIterator::UnaryDatasetIterator;
    Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
      const int64_t count = dataset()->count_;
      if (input_ == nullptr) {
        *end = true;
        return OkStatus();
      }
      if (dataset()->skip_) {
        // Skip `count` (all when negative) on the first call, then pass everything through.
        while (count < 0 || i_ < count) {
          TX_RETURN_IF_ERROR(input_->GetNext(ctx, out, end));
          if (*end) {
            input_.reset();
            return OkStatus();
          }
          ++i_;
        }
        return input_->GetNext(ctx, out, end);
      }
      if (count >= 0 && i_ >= count) {
        *end = true;
        input_.reset();
        return OkStatus();
      }
      TX_RETURN_IF_ERROR(input_->GetNext(ctx, out, end));
      if (*end) input_.reset();
      ++i_;
      return OkStatus();
    }

   private:
    int64_t i_ = 0;  // elements taken / skipped so far
  };

  const int64_t count_;
  const bool skip_;
};

template <bool kSkip>
class TakeSkipDatasetOp : public UnaryDatasetOpKernel {
 public:
  using UnaryDatasetOpKernel::UnaryDatasetOpKernel;

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx, DatasetPtr input) override {
    TX_ASSIGN_OR_RETURN(int64_t count, ParseScalarInt64(ctx, 1, "count"));
    return DatasetPtr(std::make_shared<TakeSkipDataset>(std::move(input), count, kSkip));
  }
};

REGISTER_KERNEL_BUILDER(Name("TakeDataset").Device(DEVICE_CPU), TakeSkipDatasetOp<false>);
REGISTER_KERNEL_BUILDER(Name("SkipDataset").Device(DEVICE_CPU), TakeSkipDatasetOp<true>);

// ---------------------------------------------------------------- IgnoreErrors

// TF's tf.data.experimental.ignore_errors(): the input's elements; an error from the input's
// GetNext (but CANCELLED) is dropped and the input asked again. The iterators below see
// IteratorContext::errors_are_ignored, so a file source moves past its error instead of repeating
// it (as TF's sources do). An input whose every GetNext fails forever keeps this one asking, as
// in TF.
class IgnoreErrorsDataset : public SameSpecDataset {
 public:
  IgnoreErrorsDataset(DatasetPtr input, bool log_warning)
      : SameSpecDataset(std::move(input)), log_warning_(log_warning) {}
  std::string DebugString() const override { return "IgnoreErrorsDatasetOp::Dataset"; }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public DatasetIterator<IgnoreErrorsDataset> {
   public:
    using DatasetIterator::DatasetIterator;
    Status Initialize(IteratorContext* ctx) override {
      IteratorContext mine = Marked(ctx);
      TX_ASSIGN_OR_RETURN(input_, dataset()->input()->MakeIterator(&mine));
      return OkStatus();
    }
    Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
      if (input_ == nullptr) {
        *end = true;
        return OkStatus();
      }
      IteratorContext mine = Marked(ctx);
      while (true) {
        Status s = input_->GetNext(&mine, out, end);
        if (s.ok()) {
          if (*end) input_.reset();
          return s;
        }
        if (s.code() == absl::StatusCode::kCancelled) return s;
        if (dataset()->log_warning_) {
          std::fprintf(stderr, "warning: ignore_errors dropped an error: %s\n",
                       s.ToString().c_str());
        }
      }
    }

   private:
    static IteratorContext Marked(const IteratorContext* ctx) {
      IteratorContext c = *ctx;
      c.errors_are_ignored = true;
      return c;
    }
    std::unique_ptr<IteratorBase> input_;
  };

  const bool log_warning_;
};

class IgnoreErrorsDatasetOp : public UnaryDatasetOpKernel {
 public:
  explicit IgnoreErrorsDatasetOp(OpKernelConstruction* ctx) : UnaryDatasetOpKernel(ctx) {
    Status s = ctx->GetAttr("log_warning", &log_warning_);
    if (!s.ok()) ctx->SetStatus(s);
  }

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext*, DatasetPtr input) override {
    return DatasetPtr(std::make_shared<IgnoreErrorsDataset>(std::move(input), log_warning_));
  }

 private:
  bool log_warning_ = false;
};

REGISTER_KERNEL_BUILDER(Name("IgnoreErrorsDataset").Device(DEVICE_CPU), IgnoreErrorsDatasetOp);

// ---------------------------------------------------------------- Repeat

class RepeatDataset : public SameSpecDataset {
 public:
  RepeatDataset(DatasetPtr input, int64_t count)
      : SameSpecDataset(std::move(input)), count_(count) {}
  std::string DebugString() const override {
    return absl::StrCat("RepeatDatasetOp::Dataset(", count_, ")");
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public DatasetIterator<RepeatDataset> {
   public:
    using DatasetIterator::DatasetIterator;
    Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
      const int64_t count = dataset()->count_;
      while (count < 0 || epoch_ < count) {
        if (input_ == nullptr) {
          TX_ASSIGN_OR_RETURN(input_, dataset()->input()->MakeIterator(ctx));
          epoch_empty_ = true;
        }
        TX_RETURN_IF_ERROR(input_->GetNext(ctx, out, end));
        if (!*end) {
          epoch_empty_ = false;
          return OkStatus();
        }
        *end = false;
        input_.reset();
        ++epoch_;
        // An empty epoch would make an infinite repeat spin forever: stop (TF does the same).
        if (epoch_empty_) break;
      }
      *end = true;
      return OkStatus();
    }

   private:
    std::unique_ptr<IteratorBase> input_;
    int64_t epoch_ = 0;
    bool epoch_empty_ = true;
  };

  const int64_t count_;
};

class RepeatDatasetOp : public UnaryDatasetOpKernel {
 public:
  using UnaryDatasetOpKernel::UnaryDatasetOpKernel;

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx, DatasetPtr input) override {
    TX_ASSIGN_OR_RETURN(int64_t count, ParseScalarInt64(ctx, 1, "count"));
    return DatasetPtr(std::make_shared<RepeatDataset>(std::move(input), count));
  }
};

REGISTER_KERNEL_BUILDER(Name("RepeatDataset").Device(DEVICE_CPU), RepeatDatasetOp);

// ---------------------------------------------------------------- Shard

class ShardDataset : public SameSpecDataset {
 public:
  ShardDataset(DatasetPtr input, int64_t num_shards, int64_t index, bool require_non_empty)
      : SameSpecDataset(std::move(input)),
        num_shards_(num_shards),
        index_(index),
        require_non_empty_(require_non_empty) {}
  std::string DebugString() const override {
    return absl::StrCat("ShardDatasetOp::Dataset(", num_shards_, ", ", index_, ")");
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public UnaryDatasetIterator<ShardDataset> {
   public:
    using UnaryDatasetIterator::UnaryDatasetIterator;
    Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
      const ShardDataset& d = *dataset();
      if (input_ == nullptr) {
        *end = true;
        return OkStatus();
      }
      while (true) {
        TX_RETURN_IF_ERROR(input_->GetNext(ctx, out, end));
        if (*end) {
          input_.reset();
          if (produced_ == 0 && d.require_non_empty_) {
            return errors::InvalidArgument("Shard ", d.index_, " of ", d.num_shards_,
                                           " is empty and require_non_empty is set");
          }
          return OkStatus();
        }
        if (position_++ % d.num_shards_ == d.index_) {
          ++produced_;
          return OkStatus();
        }
        out->clear();
      }
    }

   private:
    int64_t position_ = 0;
    int64_t produced_ = 0;
  };

  const int64_t num_shards_, index_;
  const bool require_non_empty_;
};

class ShardDatasetOp : public UnaryDatasetOpKernel {
 public:
  explicit ShardDatasetOp(OpKernelConstruction* ctx) : UnaryDatasetOpKernel(ctx) {
    Status s = ctx->GetAttr("require_non_empty", &require_non_empty_);
    if (!s.ok()) ctx->SetStatus(s);
  }

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx, DatasetPtr input) override {
    TX_ASSIGN_OR_RETURN(int64_t num_shards, ParseScalarInt64(ctx, 1, "num_shards"));
    TX_ASSIGN_OR_RETURN(int64_t index, ParseScalarInt64(ctx, 2, "index"));
    if (num_shards <= 0) {
      return errors::InvalidArgument("Number of shards must be greater than zero (currently "
                                     "num_shards = ", num_shards, ").");
    }
    if (index < 0 || index >= num_shards) {
      return errors::InvalidArgument("Index must be between 0 and ", num_shards - 1,
                                     " (currently index = ", index, ").");
    }
    return DatasetPtr(
        std::make_shared<ShardDataset>(std::move(input), num_shards, index, require_non_empty_));
  }

 private:
  bool require_non_empty_ = false;
};

REGISTER_KERNEL_BUILDER(Name("ShardDataset").Device(DEVICE_CPU), ShardDatasetOp);

// ---------------------------------------------------------------- options

// What an options dataset changes in DatasetOptions (unset fields keep the context's value).
struct OptionsPatch {
  std::optional<bool> map_vectorization;
  std::optional<int> max_intra_op_parallelism;
  void Apply(DatasetOptions* o) const {
    if (map_vectorization) o->map_vectorization = *map_vectorization;
    if (max_intra_op_parallelism) o->max_intra_op_parallelism = *max_intra_op_parallelism;
  }
};

// OptimizeDatasetV2 and MaxIntraOpParallelismDataset: the input, with the patched options in
// the IteratorContext of every iterator below (made at MakeIterator or later, e.g. by
// repeat(), and the background ones, which copy the context).
class OptionsDataset : public SameSpecDataset {
 public:
  OptionsDataset(DatasetPtr input, std::string op, OptionsPatch patch)
      : SameSpecDataset(std::move(input)), op_(std::move(op)), patch_(patch) {}
  std::string DebugString() const override { return absl::StrCat(op_, "Op::Dataset"); }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public DatasetIterator<OptionsDataset> {
   public:
    using DatasetIterator::DatasetIterator;
    Status Initialize(IteratorContext* ctx) override {
      IteratorContext mine = Patched(ctx);
      TX_ASSIGN_OR_RETURN(input_, dataset()->input()->MakeIterator(&mine));
      return OkStatus();
    }
    Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
      IteratorContext mine = Patched(ctx);
      return input_->GetNext(&mine, out, end);
    }

   private:
    IteratorContext Patched(const IteratorContext* ctx) const {
      IteratorContext c = *ctx;
      dataset()->patch_.Apply(&c.options);
      return c;
    }
    std::unique_ptr<IteratorBase> input_;
  };

  const std::string op_;
  const OptionsPatch patch_;
};

// Inputs: input_dataset, optimizations_enabled, optimizations_disabled, optimizations_default
// (string vectors). An optimization is on when enabled, or default and not disabled; names this
// engine does not implement are accepted and ignored (TF's behaviour for unknown rewrites).
class OptimizeDatasetOp : public UnaryDatasetOpKernel {
 public:
  using UnaryDatasetOpKernel::UnaryDatasetOpKernel;

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx, DatasetPtr input) override {
    std::vector<std::string> lists[3];
    const char* names[3] = {"optimizations_enabled", "optimizations_disabled",
                            "optimizations_default"};
    for (int i = 0; i < 3; ++i) {
      const Tensor& t = ctx->input(1 + i);
      if (t.dtype() != DT_STRING || t.dims() != 1)
        return errors::InvalidArgument(names[i], " must be a string vector, got ",
                                       DataTypeString(t.dtype()), " ", t.shape().DebugString());
      lists[i].assign(t.flat<std::string>().begin(), t.flat<std::string>().end());
    }
    auto has = [&](int list, const char* name) {
      return std::find(lists[list].begin(), lists[list].end(), name) != lists[list].end();
    };
    OptionsPatch patch;
    patch.map_vectorization = has(0, "map_vectorization") ||
                              (has(2, "map_vectorization") && !has(1, "map_vectorization"));
    return DatasetPtr(
        std::make_shared<OptionsDataset>(std::move(input), "OptimizeDatasetV2", patch));
  }
};

REGISTER_KERNEL_BUILDER(Name("OptimizeDatasetV2").Device(DEVICE_CPU), OptimizeDatasetOp);

// Inputs: input_dataset, max_intra_op_parallelism (int64 scalar >= 0; 0 = no cap).
class MaxIntraOpParallelismDatasetOp : public UnaryDatasetOpKernel {
 public:
  using UnaryDatasetOpKernel::UnaryDatasetOpKernel;

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx, DatasetPtr input) override {
    TX_ASSIGN_OR_RETURN(int64_t max, ParseScalarInt64(ctx, 1, "max_intra_op_parallelism"));
    if (max < 0 || max > 4096) {
      return errors::InvalidArgument("max_intra_op_parallelism must be in [0, 4096], got ", max);
    }
    OptionsPatch patch;
    patch.max_intra_op_parallelism = static_cast<int>(max);
    return DatasetPtr(std::make_shared<OptionsDataset>(std::move(input),
                                                       "MaxIntraOpParallelismDataset", patch));
  }
};

REGISTER_KERNEL_BUILDER(Name("MaxIntraOpParallelismDataset").Device(DEVICE_CPU),
                        MaxIntraOpParallelismDatasetOp);

}  // namespace
}  // namespace tensorflux
