// CPU kernels that enlarge a tensor by repeating or surrounding it: Tile, BroadcastTo, Pad,
// PadV2 (every dtype). Tile is one array_copy::BoxCopy over the output viewed as
// [m0, d0, m1, d1, ...] with source strides (0, stride_0, 0, stride_1, ...); BroadcastTo is the
// same with stride 0 on broadcast dims; Pad fills the output with the constant and copies the
// input into the interior box.
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/cpu/array_copy.h"
#include "tensorflux/ops/array_shape_util.h"

namespace tensorflux {
namespace {

using array_copy::BoxSpec;

// Copies in (strides given by `spec`'s src side) to a freshly allocated output 0 of `shape`.
void CopyBoxToOutput(OpKernelContext* ctx, const Tensor& in, const TensorShape& shape,
                     const BoxSpec& spec) {
  Tensor* out = nullptr;
  OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
  if (out->NumElements() == 0) return;
  ThreadPool* pool = ctx->intra_op_thread_pool();
  OP_REQUIRES_OK(ctx, array_copy::VisitElementType(in.dtype(), ctx->op_kernel().type_string(),
                                                   [&](auto tag) {
    using S = typename decltype(tag)::type;
    array_copy::BoxCopy<S>(pool, array_copy::Elements<S>(in), array_copy::Elements<S>(*out),
                           spec);
    return OkStatus();
  }));
}

class TileOp : public OpKernel {
 public:
  explicit TileOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& m_t = ctx->input(1);
    const int rank = in.dims();
    OP_REQUIRES(ctx, m_t.dims() == 1 && m_t.NumElements() == rank,
                errors::InvalidArgument("Expected multiples argument to be a vector of length ",
                                        rank, " but got shape ", m_t.shape().DebugString()));
    std::vector<int64_t> m;
    OP_REQUIRES_OK(ctx, array_util::IntValues(m_t, "multiples", &m));
    std::vector<int64_t> out_dims(rank);
    bool all_one = true;
    for (int d = 0; d < rank; ++d) {
      OP_REQUIRES(ctx, m[d] >= 0,
                  errors::InvalidArgument("Expected multiples[", d, "] >= 0, but got ", m[d]));
      OP_REQUIRES(ctx, !__builtin_mul_overflow(in.dim_size(d), m[d], &out_dims[d]),
                  errors::InvalidArgument("Tile output dim ", d, " overflows: ", in.dim_size(d),
                                          " * ", m[d]));
      all_one = all_one && m[d] == 1;
    }
    auto shape = TensorShape::Make(out_dims);
    OP_REQUIRES_OK(ctx, shape.status());
    if (all_one) {
      ctx->set_output(0, in);
      return;
    }
    const auto in_strides = array_copy::RowMajorStrides(in.shape().dim_sizes());
    const auto out_strides = array_copy::RowMajorStrides(out_dims);
    BoxSpec spec;
    for (int d = 0; d < rank; ++d) {
      spec.AddDim(m[d], 0, in.dim_size(d) * out_strides[d]);
      spec.AddDim(in.dim_size(d), in_strides[d], out_strides[d]);
    }
    CopyBoxToOutput(ctx, in, *shape, spec);
  }
};
REGISTER_KERNEL_BUILDER(Name("Tile").Device(DEVICE_CPU), TileOp);

class BroadcastToOp : public OpKernel {
 public:
  explicit BroadcastToOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& shape_t = ctx->input(1);
    OP_REQUIRES(ctx, shape_t.dims() == 1,
                errors::InvalidArgument("shape must be a vector, got ",
                                        shape_t.shape().DebugString()));
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(ctx, array_util::IntValues(shape_t, "shape", &dims));
    auto shape = TensorShape::Make(dims);
    OP_REQUIRES_OK(ctx, shape.status());
    const int rank = shape->dims(), in_rank = in.dims();
    OP_REQUIRES(ctx, in_rank <= rank,
                errors::InvalidArgument("Rank of input (", in_rank,
                                        ") must be no greater than rank of output shape (", rank,
                                        ")."));
    const auto in_strides = array_copy::RowMajorStrides(in.shape().dim_sizes());
    const auto out_strides = array_copy::RowMajorStrides(dims);
    BoxSpec spec;
    for (int d = 0; d < rank; ++d) {
      const int k = d - (rank - in_rank);  // input dim aligned on the right, -1 if none
      const int64_t in_dim = k >= 0 ? in.dim_size(k) : 1;
      OP_REQUIRES(ctx, in_dim == dims[d] || in_dim == 1,
                  errors::InvalidArgument("Incompatible shapes: ", in.shape().DebugString(),
                                          " vs. ", shape->DebugString()));
      spec.AddDim(dims[d], in_dim == 1 ? 0 : in_strides[k], out_strides[d]);
    }
    if (in.shape() == *shape) {
      ctx->set_output(0, in);
      return;
    }
    CopyBoxToOutput(ctx, in, *shape, spec);
  }
};
REGISTER_KERNEL_BUILDER(Name("BroadcastTo").Device(DEVICE_CPU), BroadcastToOp);

// Pad (zeros) and PadV2 (constant_values).
class PadOp : public OpKernel {
 public:
  explicit PadOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& p_t = ctx->input(1);
    const int rank = in.dims();
    OP_REQUIRES(ctx, p_t.dims() == 2 && p_t.dim_size(1) == 2,
                errors::InvalidArgument("paddings must be a matrix with 2 columns: ",
                                        p_t.shape().DebugString()));
    OP_REQUIRES(ctx, p_t.dim_size(0) == rank,
                errors::InvalidArgument("The first dimension of paddings must be the rank of "
                                        "inputs", p_t.shape().DebugString(), " ",
                                        in.shape().DebugString()));
    const Tensor* constant = nullptr;
    if (ctx->num_inputs() > 2) {
      constant = &ctx->input(2);
      OP_REQUIRES(ctx, constant->dims() == 0,
                  errors::InvalidArgument("constant_values must be a scalar. Got: ",
                                          constant->shape().DebugString()));
    }
    std::vector<int64_t> pads;
    OP_REQUIRES_OK(ctx, array_util::IntValues(p_t, "paddings", &pads));
    std::vector<int64_t> out_dims(rank);
    bool none = true;
    for (int d = 0; d < rank; ++d) {
      const int64_t before = pads[2 * d], after = pads[2 * d + 1];
      OP_REQUIRES(ctx, before >= 0 && after >= 0,
                  errors::InvalidArgument("Paddings must be non-negative: ", before, " ", after));
      int64_t sum = 0;
      OP_REQUIRES(ctx, !__builtin_add_overflow(in.dim_size(d), before, &sum) &&
                           !__builtin_add_overflow(sum, after, &out_dims[d]),
                  errors::InvalidArgument("Padded dim ", d, " overflows int64"));
      none = none && before == 0 && after == 0;
    }
    auto shape = TensorShape::Make(out_dims);
    OP_REQUIRES_OK(ctx, shape.status());
    if (none) {
      ctx->set_output(0, in);
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    if (out->NumElements() == 0) return;
    const auto in_strides = array_copy::RowMajorStrides(in.shape().dim_sizes());
    const auto out_strides = array_copy::RowMajorStrides(out_dims);
    BoxSpec spec;
    int64_t start = 0;
    for (int d = 0; d < rank; ++d) {
      spec.AddDim(in.dim_size(d), in_strides[d], out_strides[d]);
      start += pads[2 * d] * out_strides[d];
    }
    ThreadPool* pool = ctx->intra_op_thread_pool();
    OP_REQUIRES_OK(ctx, array_copy::VisitElementType(in.dtype(), type_string(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      S* dst = array_copy::Elements<S>(*out);
      const S value = constant != nullptr ? *array_copy::Elements<S>(*constant) : S{};
      array_copy::FillElements<S>(pool, dst, out->NumElements(), value);
      if (in.NumElements() > 0) {
        array_copy::BoxCopy<S>(pool, array_copy::Elements<S>(in), dst + start, spec);
      }
      return OkStatus();
    }));
  }
};
REGISTER_KERNEL_BUILDER(Name("Pad").Device(DEVICE_CPU), PadOp);
REGISTER_KERNEL_BUILDER(Name("PadV2").Device(DEVICE_CPU), PadOp);

}  // namespace
}  // namespace tensorflux
