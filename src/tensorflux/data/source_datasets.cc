// Datasets made from tensors and numbers: TensorDataset (one element), TensorSliceDataset (the
// rows of the components) and RangeDataset (start, start + step, ... before stop).
#include "absl/strings/str_cat.h"
#include "tensorflux/data/dataset.h"

namespace tensorflux {
namespace {

// ---------------------------------------------------------------- TensorDataset / slices

// One dataset class for both ops: `slice` false yields the components once; true yields one
// element per row of dim 0.
class TensorsDataset : public DatasetBase {
 public:
  TensorsDataset(std::vector<Tensor> components, bool slice)
      : components_(std::move(components)), slice_(slice) {
    for (const Tensor& t : components_) {
      dtypes_.push_back(t.dtype());
      if (!slice_) {
        shapes_.push_back(PartialTensorShape(t.shape()));
      } else {
        TensorShape row = t.shape();
        row.RemoveDim(0);
        shapes_.push_back(PartialTensorShape(row));
      }
    }
    num_elements_ = slice_ ? components_[0].dim_size(0) : 1;
  }

  const DataTypeVector& output_dtypes() const override { return dtypes_; }
  const std::vector<PartialTensorShape>& output_shapes() const override { return shapes_; }
  std::string DebugString() const override {
    return slice_ ? "TensorSliceDatasetOp::Dataset" : "TensorDatasetOp::Dataset";
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public DatasetIterator<TensorsDataset> {
   public:
    using DatasetIterator::DatasetIterator;
    Status GetNextInternal(IteratorContext*, std::vector<Tensor>* out, bool* end) override {
      const TensorsDataset& d = *dataset();
      if (i_ >= d.num_elements_) {
        *end = true;
        return OkStatus();
      }
      for (const Tensor& t : d.components_) {
        if (!d.slice_) {
          out->push_back(t);
          continue;
        }
        // Row i_, sharing the buffer, with the row's shape.
        Tensor row;
        if (!row.CopyFrom(t.Slice(i_, i_ + 1), d.shapes_[out->size()].AsTensorShape().value())) {
          return errors::Internal("TensorSliceDataset: bad row shape");
        }
        out->push_back(std::move(row));
      }
      ++i_;
      return OkStatus();
    }

   private:
    int64_t i_ = 0;
  };

  std::vector<Tensor> components_;
  bool slice_;
  int64_t num_elements_ = 0;
  DataTypeVector dtypes_;
  std::vector<PartialTensorShape> shapes_;
};

template <bool kSlice>
class TensorsDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx) override {
    std::vector<Tensor> components;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const Tensor& t = ctx->input(i);
      if (kSlice) {
        if (t.dims() < 1) {
          return errors::InvalidArgument("All components must be at least 1-dimensional; "
                                         "component ", i, " has shape ",
                                         t.shape().DebugString());
        }
        if (!components.empty() && t.dim_size(0) != components[0].dim_size(0)) {
          return errors::InvalidArgument(
              "All components must have the same size in the 0th dimension; component 0 has ",
              components[0].dim_size(0), " rows and component ", i, " has ", t.dim_size(0));
        }
      }
      components.push_back(t);
    }
    if (components.empty()) return errors::InvalidArgument("A dataset needs >= 1 component");
    return DatasetPtr(std::make_shared<TensorsDataset>(std::move(components), kSlice));
  }
};

REGISTER_KERNEL_BUILDER(Name("TensorDataset").Device(DEVICE_CPU), TensorsDatasetOp<false>);
REGISTER_KERNEL_BUILDER(Name("TensorSliceDataset").Device(DEVICE_CPU), TensorsDatasetOp<true>);

// ---------------------------------------------------------------- RangeDataset

class RangeDataset : public DatasetBase {
 public:
  RangeDataset(int64_t start, int64_t stop, int64_t step, DataType dtype)
      : start_(start), stop_(stop), step_(step), dtypes_{dtype}, shapes_{PartialTensorShape::Scalar()} {}

  const DataTypeVector& output_dtypes() const override { return dtypes_; }
  const std::vector<PartialTensorShape>& output_shapes() const override { return shapes_; }
  std::string DebugString() const override {
    return absl::StrCat("RangeDatasetOp::Dataset(", start_, ", ", stop_, ", ", step_, ")");
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public DatasetIterator<RangeDataset> {
   public:
    explicit Iterator(const RangeDataset* d) : DatasetIterator(d), next_(d->start_) {}
    Status GetNextInternal(IteratorContext*, std::vector<Tensor>* out, bool* end) override {
      const RangeDataset& d = *dataset();
      if ((d.step_ > 0 && next_ >= d.stop_) || (d.step_ < 0 && next_ <= d.stop_)) {
        *end = true;
        return OkStatus();
      }
      Tensor t(d.dtypes_[0], TensorShape());
      TX_RETURN_IF_ERROR(VisitPodType(d.dtypes_[0], "RangeDataset", [&](auto tag) -> Status {
        using T = typename decltype(tag)::type;
        *t.data<T>() = static_cast<T>(next_);
        return OkStatus();
      }));
      out->push_back(std::move(t));
      // Saturate instead of overflowing near the int64 limits (the loop then ends).
      if (__builtin_add_overflow(next_, d.step_, &next_)) next_ = d.stop_;
      return OkStatus();
    }

   private:
    int64_t next_;
  };

  const int64_t start_, stop_, step_;
  const DataTypeVector dtypes_;
  const std::vector<PartialTensorShape> shapes_;
};

class RangeDatasetOp : public DatasetOpKernel {
 public:
  explicit RangeDatasetOp(OpKernelConstruction* ctx) : DatasetOpKernel(ctx) {
    if (!ctx->status().ok()) return;
    if (output_types_.size() != 1 ||
        !(DataTypeIsInteger(output_types_[0]) || output_types_[0] == DT_FLOAT ||
          output_types_[0] == DT_DOUBLE)) {
      ctx->SetStatus(errors::InvalidArgument(
          "RangeDataset: output_types must be one integer or floating type, got [",
          DataTypeVectorString(output_types_), "]"));
    }
  }

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx) override {
    TX_ASSIGN_OR_RETURN(int64_t start, ParseScalarInt64(ctx, 0, "start"));
    TX_ASSIGN_OR_RETURN(int64_t stop, ParseScalarInt64(ctx, 1, "stop"));
    TX_ASSIGN_OR_RETURN(int64_t step, ParseScalarInt64(ctx, 2, "step"));
    if (step == 0) return errors::InvalidArgument("step must be a non-zero integer.");
    return DatasetPtr(std::make_shared<RangeDataset>(start, stop, step, output_types_[0]));
  }
};

REGISTER_KERNEL_BUILDER(Name("RangeDataset").Device(DEVICE_CPU), RangeDatasetOp);

}  // namespace
}  // namespace tensorflux
