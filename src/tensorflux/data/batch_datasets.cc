// BatchDatasetV2 and PaddedBatchDatasetV2: one dataset class, one copy path.
//
// A batch stacks up to batch_size consecutive input elements along a new dim 0 (the last
// batch may be smaller unless drop_remainder). An unpadded batch of a map with an elementwise
// function batches the map's input and runs the function once per batch instead
// (data/map_vectorization.h). Unpadded, every element of a batch must have
// the same shape per component (INVALID_ARGUMENT naming the component and both shapes).
// Padded, component i of every element is placed at the origin of a padded_shapes[i] box
// (dims of -1 take the batch's largest size) filled with padding_values[i]; an element larger
// than a fixed padded dim is DATA_LOSS (TF's code for it).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tensorflux/data/dataset.h"
#include "tensorflux/data/map_vectorization.h"

namespace tensorflux {
namespace {

// Calls fn(TypeTag<T>{}) for every dtype a dataset element can hold.
template <typename Fn>
Status VisitElementType(DataType dt, Fn&& fn) {
  if (dt == DT_STRING) return fn(TypeTag<std::string>{});
  if (dt == DT_VARIANT) return fn(TypeTag<Variant>{});
  if (dt == DT_RESOURCE) return fn(TypeTag<ResourceHandle>{});
  return VisitPodType(dt, "Batching", fn);
}

// Copies `elem` (shape s) into row `row` of `batch` (shape [n] + p with s[d] <= p[d]), at the
// origin of the row's box. Innermost runs are copied with std::copy (memmove for PODs).
template <typename T>
void CopyIntoRow(const Tensor& elem, Tensor* batch, int64_t row) {
  const TensorShape& s = elem.shape();
  const int rank = s.dims();
  int64_t row_elems = 1;
  for (int d = 1; d < batch->dims(); ++d) row_elems *= batch->dim_size(d);
  const T* src = elem.data<T>();
  T* dst = batch->data<T>() + row * row_elems;
  const int64_t n = s.num_elements();
  if (n == 0) return;
  if (n == row_elems) {  // s[d] <= p[d] for every d, so the element fills the row: one copy
    std::copy(src, src + n, dst);
    return;
  }
  const int64_t inner = s.dim_size(rank - 1);
  // Strides of the padded row box.
  std::vector<int64_t> dst_stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) dst_stride[d] = dst_stride[d + 1] * batch->dim_size(d + 2);
  std::vector<int64_t> idx(rank, 0);  // index of the current run's first element in elem
  for (int64_t off = 0; off < n; off += inner) {
    int64_t dst_off = 0;
    for (int d = 0; d < rank - 1; ++d) dst_off += idx[d] * dst_stride[d];
    std::copy(src + off, src + off + inner, dst + dst_off);
    for (int d = rank - 2; d >= 0; --d) {
      if (++idx[d] < s.dim_size(d)) break;
      idx[d] = 0;
    }
  }
}

class BatchDataset : public DatasetBase {
 public:
  // padded_shapes / padding_values empty: no padding.
  BatchDataset(DatasetPtr input, int64_t batch_size, bool drop_remainder,
               std::vector<PartialTensorShape> padded_shapes, std::vector<Tensor> padding_values)
      : input_(std::move(input)),
        batch_size_(batch_size),
        drop_remainder_(drop_remainder),
        padded_shapes_(std::move(padded_shapes)),
        padding_values_(std::move(padding_values)) {
    const auto& in_shapes = padded_shapes_.empty() ? input_->output_shapes() : padded_shapes_;
    for (const PartialTensorShape& s : in_shapes) {
      std::vector<int64_t> dims{drop_remainder_ ? batch_size_ : -1};
      if (s.unknown_rank()) {
        shapes_.push_back(PartialTensorShape());
        continue;
      }
      for (int64_t d : s.dim_sizes()) dims.push_back(d);
      shapes_.push_back(PartialTensorShape(dims));
    }
  }

  const DataTypeVector& output_dtypes() const override { return input_->output_dtypes(); }
  const std::vector<PartialTensorShape>& output_shapes() const override { return shapes_; }
  const DatasetPtr& input() const { return input_; }
  std::string DebugString() const override {
    return absl::StrCat(padded_shapes_.empty() ? "BatchDatasetV2Op" : "PaddedBatchDatasetV2Op",
                        "::Dataset(", batch_size_, ")");
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public UnaryDatasetIterator<BatchDataset> {
   public:
    using UnaryDatasetIterator::UnaryDatasetIterator;
    Status Initialize(IteratorContext* ctx) override {
      const BatchDataset& d = *dataset();
      if (d.padded_shapes_.empty() && ctx->options.map_vectorization) {
        TX_ASSIGN_OR_RETURN(map_, BatchedMapFunction::Make(ctx, *d.input_));
      }
      if (map_ == nullptr) return UnaryDatasetIterator::Initialize(ctx);
      // Vectorized: read what the map reads; the map runs once per batch (GetNextInternal).
      TX_ASSIGN_OR_RETURN(input_, d.input_->map_function()->input->MakeIterator(ctx));
      return OkStatus();
    }
    Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
      const BatchDataset& d = *dataset();
      size_t n = 0;
      while (input_ != nullptr && static_cast<int64_t>(n) < d.batch_size_) {
        if (elems_.size() <= n) elems_.emplace_back();
        bool e_end = false;
        TX_RETURN_IF_ERROR(input_->GetNext(ctx, &elems_[n], &e_end));
        if (e_end) {
          input_.reset();
          break;
        }
        ++n;
      }
      if (n == 0 || (d.drop_remainder_ && static_cast<int64_t>(n) < d.batch_size_)) {
        *end = true;
        return OkStatus();
      }
      const absl::Span<const std::vector<Tensor>> elems(elems_.data(), n);
      std::vector<Tensor> batch;
      for (size_t c = 0; c < elems[0].size(); ++c) {
        TX_ASSIGN_OR_RETURN(Tensor t, d.BatchComponent(c, elems));
        batch.push_back(std::move(t));
      }
      for (size_t i = 0; i < n; ++i) elems_[i].clear();  // keeps each vector's capacity
      if (map_ != nullptr) return map_->Run(std::move(batch), static_cast<int64_t>(n), out);
      *out = std::move(batch);
      return OkStatus();
    }

   private:
    std::unique_ptr<BatchedMapFunction> map_;  // set when the input map is vectorized
    std::vector<std::vector<Tensor>> elems_;   // the batch's elements, reused batch to batch
  };

  // Component c of `elems` stacked (and padded).
  StatusOr<Tensor> BatchComponent(size_t c, absl::Span<const std::vector<Tensor>> elems) const {
    const bool padded = !padded_shapes_.empty();
    const TensorShape& first = elems[0][c].shape();
    // The row shape: the first element's, or the padded shape with -1 dims resolved.
    TensorShape row;
    if (!padded) {
      for (size_t i = 1; i < elems.size(); ++i) {
        if (elems[i][c].shape() != first) {
          return errors::InvalidArgument(
              "Cannot batch tensors with different shapes in component ", c,
              ". First element had shape ", first.DebugString(), " and element ", i,
              " had shape ", elems[i][c].shape().DebugString(), ".");
        }
      }
      row = first;
    } else {
      const PartialTensorShape& p = padded_shapes_[c];
      for (int d = 0; d < p.dims(); ++d) {
        int64_t size = p.dim_size(d);
        for (size_t i = 0; i < elems.size(); ++i) {
          const TensorShape& s = elems[i][c].shape();
          if (s.dims() != p.dims()) {
            return errors::InvalidArgument("Component ", c, " of element ", i, " has shape ",
                                           s.DebugString(), " but padded_shapes[", c, "] is ",
                                           p.DebugString(), " (ranks differ)");
          }
          if (p.dim_size(d) < 0) {
            size = std::max(size, s.dim_size(d));
          } else if (s.dim_size(d) > p.dim_size(d)) {
            // DATA_LOSS as TF (padded_batch_dataset_op.cc) says it.
            return errors::DataLoss("Attempted to pad to a smaller size than the input "
                                           "element: component ", c, " of element ", i,
                                           " has shape ", s.DebugString(),
                                           " and padded_shapes[", c, "] is ", p.DebugString());
          }
        }
        row.AddDim(std::max<int64_t>(size, 0));
      }
    }
    TensorShape shape = row;
    shape.InsertDim(0, static_cast<int64_t>(elems.size()));
    const DataType dt = elems[0][c].dtype();
    TX_ASSIGN_OR_RETURN(Tensor batch, Tensor::Allocate(dt, shape));
    TX_RETURN_IF_ERROR(VisitElementType(dt, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if (padded) {
        const T pad = padding_values_[c].scalar<T>();
        auto flat = batch.flat<T>();
        std::fill(flat.begin(), flat.end(), pad);
      }
      for (size_t i = 0; i < elems.size(); ++i) {
        CopyIntoRow<T>(elems[i][c], &batch, static_cast<int64_t>(i));
      }
      return OkStatus();
    }));
    return batch;
  }

  const DatasetPtr input_;
  const int64_t batch_size_;
  const bool drop_remainder_;
  const std::vector<PartialTensorShape> padded_shapes_;
  const std::vector<Tensor> padding_values_;
  std::vector<PartialTensorShape> shapes_;
};

StatusOr<int64_t> ParseBatchSize(OpKernelContext* ctx) {
  TX_ASSIGN_OR_RETURN(int64_t batch_size, ParseScalarInt64(ctx, 1, "batch_size"));
  if (batch_size <= 0) {
    return errors::InvalidArgument("Batch size must be greater than zero, got ", batch_size);
  }
  return batch_size;
}

class BatchDatasetOp : public UnaryDatasetOpKernel {
 public:
  using UnaryDatasetOpKernel::UnaryDatasetOpKernel;

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx, DatasetPtr input) override {
    TX_ASSIGN_OR_RETURN(int64_t batch_size, ParseBatchSize(ctx));
    TX_ASSIGN_OR_RETURN(bool drop_remainder, ParseScalarBool(ctx, 2, "drop_remainder"));
    return DatasetPtr(
        std::make_shared<BatchDataset>(std::move(input), batch_size, drop_remainder,
                                       std::vector<PartialTensorShape>{}, std::vector<Tensor>{}));
  }
};

// Inputs: input_dataset, batch_size, padded_shapes (N int64 vectors), padding_values (N
// scalars), drop_remainder.
class PaddedBatchDatasetOp : public UnaryDatasetOpKernel {
 public:
  using UnaryDatasetOpKernel::UnaryDatasetOpKernel;

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx, DatasetPtr input) override {
    TX_ASSIGN_OR_RETURN(int64_t batch_size, ParseBatchSize(ctx));
    const int n = static_cast<int>(input->output_dtypes().size());
    if (ctx->num_inputs() != 3 + 2 * n) {
      return errors::InvalidArgument("PaddedBatchDatasetV2 needs ", n, " padded_shapes and ", n,
                                     " padding_values for a dataset of ", n, " components");
    }
    std::vector<PartialTensorShape> padded;
    std::vector<Tensor> values;
    for (int c = 0; c < n; ++c) {
      const Tensor& ps = ctx->input(2 + c);
      if (ps.dtype() != DT_INT64 || ps.dims() != 1) {
        return errors::InvalidArgument("padded_shapes[", c, "] must be an int64 vector, got ",
                                       ps.shape().DebugString());
      }
      std::vector<int64_t> dims(ps.flat<int64_t>().begin(), ps.flat<int64_t>().end());
      for (int64_t d : dims) {
        if (d < -1) return errors::InvalidArgument("padded_shapes[", c, "] has dim ", d, " < -1");
      }
      PartialTensorShape p(dims);
      const int in_rank = input->output_shapes()[c].dims();  // -1 when unknown
      if (in_rank >= 0 && in_rank != p.dims()) {
        return errors::InvalidArgument("padded_shapes[", c, "] ", p.DebugString(),
                                       " does not have the rank of component ", c, " ",
                                       input->output_shapes()[c].DebugString());
      }
      padded.push_back(p);
      const Tensor& v = ctx->input(2 + n + c);
      if (v.dims() != 0 || v.dtype() != input->output_dtypes()[c]) {
        return errors::InvalidArgument("padding_values[", c, "] must be a scalar of dtype ",
                                       DataTypeString(input->output_dtypes()[c]), ", got ",
                                       DataTypeString(v.dtype()), " ", v.shape().DebugString());
      }
      values.push_back(v);
    }
    TX_ASSIGN_OR_RETURN(bool drop_remainder, ParseScalarBool(ctx, 2 + 2 * n, "drop_remainder"));
    return DatasetPtr(std::make_shared<BatchDataset>(std::move(input), batch_size, drop_remainder,
                                                     std::move(padded), std::move(values)));
  }
};

REGISTER_KERNEL_BUILDER(Name("BatchDatasetV2").Device(DEVICE_CPU), BatchDatasetOp);
REGISTER_KERNEL_BUILDER(Name("PaddedBatchDatasetV2").Device(DEVICE_CPU), PaddedBatchDatasetOp);

}  // namespace
}  // namespace tensorflux
