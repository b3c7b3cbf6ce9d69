// CPU kernels: Slice, StridedSlice, StridedSliceGrad (every dtype). The index arithmetic is
// ops/strided_slice_spec.h (shared with the shape function); the copy is one
// array_copy::BoxCopy with (possibly negative) source strides. A slice that takes the input
// whole, or whole rows along dim 0, shares the input's buffer.
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/cpu/array_copy.h"
#include "tensorflux/ops/array_shape_util.h"
#include "tensorflux/ops/strided_slice_spec.h"

namespace tensorflux {
namespace {

using array_copy::BoxSpec;

// Output = input[begin + k * stride for k < size] per dim, reshaped to `out_shape`. Shares the
// input's buffer for whole-tensor and dim-0 slices.
void SliceOutput(OpKernelContext* ctx, const Tensor& in, absl::Span<const int64_t> begin,
                 absl::Span<const int64_t> stride, absl::Span<const int64_t> size,
                 const TensorShape& out_shape, bool identity, bool dim0) {
  if (identity) {
    Tensor out;
    out.CopyFrom(in, out_shape);
    ctx->set_output(0, std::move(out));
    return;
  }
  if (dim0) {
    Tensor rows = in.Slice(begin[0], begin[0] + size[0]);
    Tensor out;
    out.CopyFrom(rows, out_shape);
    ctx->set_output(0, std::move(out));
    return;
  }
  Tensor* out = nullptr;
  OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
  if (out->NumElements() == 0) return;
  const int rank = in.dims();
  const auto in_strides = array_copy::RowMajorStrides(in.shape().dim_sizes());
  const auto out_strides = array_copy::RowMajorStrides(size);
  BoxSpec spec;
  int64_t start = 0;
  for (int d = 0; d < rank; ++d) {
    spec.AddDim(size[d], in_strides[d] * stride[d], out_strides[d]);
    start += begin[d] * in_strides[d];
  }
  ThreadPool* pool = ctx->intra_op_thread_pool();
  OP_REQUIRES_OK(ctx, array_copy::VisitElementType(in.dtype(), ctx->op_kernel().type_string(),
                                                   [&](auto tag) {
    using S = typename decltype(tag)::type;
    array_copy::BoxCopy<S>(pool, array_copy::Elements<S>(in) + start,
                           array_copy::Elements<S>(*out), spec);
    return OkStatus();
  }));
}

class SliceOp : public OpKernel {
 public:
  explicit SliceOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& begin_t = ctx->input(1);
    const Tensor& size_t_ = ctx->input(2);
    const int rank = in.dims();
    OP_REQUIRES(ctx, begin_t.dims() == 1 && size_t_.dims() == 1 &&
                         begin_t.NumElements() == rank && size_t_.NumElements() == rank,
                errors::InvalidArgument("Expected begin and size arguments to be 1-D tensors of "
                                        "size ", rank, ", but got shapes ",
                                        begin_t.shape().DebugString(), " and ",
                                        size_t_.shape().DebugString(), " instead."));
    std::vector<int64_t> begin, size;
    OP_REQUIRES_OK(ctx, array_util::IntValues(begin_t, "begin", &begin));
    OP_REQUIRES_OK(ctx, array_util::IntValues(size_t_, "size", &size));
    bool identity = true, dim0 = rank > 0;
    for (int d = 0; d < rank; ++d) {
      const int64_t dim = in.dim_size(d);
      OP_REQUIRES(ctx, begin[d] >= 0 && begin[d] <= dim,
                  errors::InvalidArgument("Expected begin[", d, "] in [0, ", dim, "], but got ",
                                          begin[d]));
      if (size[d] == -1) size[d] = dim - begin[d];
      OP_REQUIRES(ctx, size[d] >= 0 && size[d] <= dim - begin[d],
                  errors::InvalidArgument("Expected size[", d, "] in [0, ", dim - begin[d],
                                          "], but got ", size[d]));
      const bool whole = begin[d] == 0 && size[d] == dim;
      identity = identity && whole;
      if (d > 0 && !whole) dim0 = false;
    }
    const TensorShape out_shape(absl::Span<const int64_t>(size.data(), size.size()));
    const std::vector<int64_t> ones(rank, 1);
    SliceOutput(ctx, in, begin, ones, size, out_shape, identity, dim0);
  }
};
REGISTER_KERNEL_BUILDER(Name("Slice").Device(DEVICE_CPU), SliceOp);

// Reads begin/end/strides (inputs first..first+2) and the mask attrs.
class StridedSliceBase : public OpKernel {
 public:
  explicit StridedSliceBase(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("begin_mask", &args_.begin_mask));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("end_mask", &args_.end_mask));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("ellipsis_mask", &args_.ellipsis_mask));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("new_axis_mask", &args_.new_axis_mask));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shrink_axis_mask", &args_.shrink_axis_mask));
  }

 protected:
  Status Spec(OpKernelContext* ctx, int first, const TensorShape& shape,
              StridedSliceSpec* spec) const {
    const Tensor& b = ctx->input(first);
    const Tensor& e = ctx->input(first + 1);
    const Tensor& s = ctx->input(first + 2);
    if (b.dims() != 1 || e.dims() != 1 || s.dims() != 1 || b.NumElements() != e.NumElements() ||
        b.NumElements() != s.NumElements()) {
      return errors::InvalidArgument(
          "Expected begin, end, and strides to be 1D equal size tensors, but got shapes ",
          b.shape().DebugString(), ", ", e.shape().DebugString(), ", and ",
          s.shape().DebugString(), " instead.");
    }
    StridedSliceArgs args = args_;
    args.num_entries = b.NumElements();
    std::vector<int64_t> v[3];
    TX_RETURN_IF_ERROR(array_util::IntValues(b, "begin", &v[0]));
    TX_RETURN_IF_ERROR(array_util::IntValues(e, "end", &v[1]));
    TX_RETURN_IF_ERROR(array_util::IntValues(s, "strides", &v[2]));
    args.begin = std::move(v[0]);
    args.end = std::move(v[1]);
    args.strides = std::move(v[2]);
    return ComputeStridedSlice(PartialTensorShape(shape), args, spec);
  }

 private:
  StridedSliceArgs args_;
};

class StridedSliceOp : public StridedSliceBase {
 public:
  using StridedSliceBase::StridedSliceBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    StridedSliceSpec spec;
    OP_REQUIRES_OK(ctx, Spec(ctx, 1, in.shape(), &spec));
    auto out_shape = TensorShape::Make(spec.final_shape);
    OP_REQUIRES_OK(ctx, out_shape.status());
    SliceOutput(ctx, in, spec.begin, spec.stride, spec.processing_shape, *out_shape,
                spec.is_identity, spec.is_dim0_slice);
  }
};
REGISTER_KERNEL_BUILDER(Name("StridedSlice").Device(DEVICE_CPU), StridedSliceOp);

// output = zeros(shape); output[slice] = dy.
class StridedSliceGradOp : public StridedSliceBase {
 public:
  using StridedSliceBase::StridedSliceBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& shape_t = ctx->input(0);
    const Tensor& dy = ctx->input(4);
    OP_REQUIRES(ctx, shape_t.dims() == 1,
                errors::InvalidArgument("shape must be 1-D, got ", shape_t.shape().DebugString()));
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(ctx, array_util::IntValues(shape_t, "shape", &dims));
    auto x_shape = TensorShape::Make(dims);
    OP_REQUIRES_OK(ctx, x_shape.status());
    StridedSliceSpec spec;
    OP_REQUIRES_OK(ctx, Spec(ctx, 1, *x_shape, &spec));
    auto dy_shape = TensorShape::Make(spec.final_shape);
    OP_REQUIRES_OK(ctx, dy_shape.status());
    OP_REQUIRES(ctx, dy.shape() == *dy_shape,
                errors::InvalidArgument("shape of dy was ", dy.shape().DebugString(),
                                        " instead of ", dy_shape->DebugString()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *x_shape, &out));
    const int rank = x_shape->dims();
    const auto x_strides = array_copy::RowMajorStrides(x_shape->dim_sizes());
    const auto dy_strides = array_copy::RowMajorStrides(spec.processing_shape);
    BoxSpec box;
    int64_t start = 0;
    for (int d = 0; d < rank; ++d) {
      box.AddDim(spec.processing_shape[d], dy_strides[d], x_strides[d] * spec.stride[d]);
      start += spec.begin[d] * x_strides[d];
    }
    ThreadPool* pool = ctx->intra_op_thread_pool();
    OP_REQUIRES_OK(ctx, array_copy::VisitElementType(dy.dtype(), "StridedSliceGrad",
                                                     [&](auto tag) {
      using S = typename decltype(tag)::type;
      S* dst = array_copy::Elements<S>(*out);
      array_copy::FillElements<S>(pool, dst, out->NumElements(), S{});
      if (dy.NumElements() > 0) {
        array_copy::BoxCopy<S>(pool, array_copy::Elements<S>(dy), dst + start, box);
      }
      return OkStatus();
    }));
  }
};
REGISTER_KERNEL_BUILDER(Name("StridedSliceGrad").Device(DEVICE_CPU), StridedSliceGradOp);

}  // namespace
}  // namespace tensorflux
