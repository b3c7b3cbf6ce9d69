// CPU kernels that only look at or relabel shapes: ExpandDims and Squeeze (share the input's
// buffer), StopGradient (forwards its input), ShapeN, and BroadcastGradientArgs (TF's reduction
// axes for the gradients of a broadcasting binary op).
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/ops/array_shape_util.h"

namespace tensorflux {
namespace {

void ReshapedOutput(OpKernelContext* ctx, const TensorShape& shape) {
  Tensor out;
  out.CopyFrom(ctx->input(0), shape);  // same element count: cannot fail
  ctx->set_output(0, std::move(out));
}

class ExpandDimsOp : public OpKernel {
 public:
  explicit ExpandDimsOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& dim_t = ctx->input(1);
    OP_REQUIRES(ctx, dim_t.NumElements() == 1,
                errors::InvalidArgument("'dim' must be a tensor with a single value, got shape ",
                                        dim_t.shape().DebugString()));
    std::vector<int64_t> v;
    OP_REQUIRES_OK(ctx, array_util::IntValues(dim_t, "dim", &v));
    int64_t dim = 0;
    OP_REQUIRES_OK(ctx, array_util::NormalizeAxis(v[0], in.dims() + 1, "ExpandDims' dim", &dim));
    OP_REQUIRES(ctx, in.dims() < TensorShape::kMaxDims,
                errors::InvalidArgument("ExpandDims: input already has the maximum rank ",
                                        TensorShape::kMaxDims));
    TensorShape shape = in.shape();
    shape.InsertDim(static_cast<int>(dim), 1);
    ReshapedOutput(ctx, shape);
  }
};
REGISTER_KERNEL_BUILDER(Name("ExpandDims").Device(DEVICE_CPU), ExpandDimsOp);

class SqueezeOp : public OpKernel {
 public:
  explicit SqueezeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("squeeze_dims", &squeeze_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const int rank = in.dims();
    std::vector<bool> drop(rank, squeeze_.empty());
    for (int64_t d : squeeze_) {
      OP_REQUIRES(ctx, d >= -rank && d < rank,
                  errors::InvalidArgument("Tried to squeeze dim index ", d, " for tensor with ",
                                          rank, " dimensions."));
      const int a = static_cast<int>(d < 0 ? d + rank : d);
      OP_REQUIRES(ctx, in.dim_size(a) == 1,
                  errors::InvalidArgument("Can not squeeze dim[", a,
                                          "], expected a dimension of 1, got ", in.dim_size(a)));
      drop[a] = true;
    }
    TensorShape shape;
    for (int d = 0; d < rank; ++d) {
      if (!(drop[d] && in.dim_size(d) == 1)) shape.AddDim(in.dim_size(d));
    }
    ReshapedOutput(ctx, shape);
  }

 private:
  std::vector<int64_t> squeeze_;
};
REGISTER_KERNEL_BUILDER(Name("Squeeze").Device(DEVICE_CPU), SqueezeOp);

class StopGradientOp : public OpKernel {
 public:
  explicit StopGradientOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->release_input(0)); }
};
REGISTER_KERNEL_BUILDER(Name("StopGradient").Device(DEVICE_CPU), StopGradientOp);

class ShapeNOp : public OpKernel {
 public:
  explicit ShapeNOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const TensorShape& s = ctx->input(i).shape();
      Tensor* out = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, TensorShape({int64_t{s.dims()}}), &out));
      OP_REQUIRES_OK(ctx, array_util::SetIntValues(
                              std::vector<int64_t>(s.dim_sizes().begin(), s.dim_sizes().end()),
                              "ShapeN (use out_type=int64)", out));
    }
  }
};
REGISTER_KERNEL_BUILDER(Name("ShapeN").Device(DEVICE_CPU), ShapeNOp);

// r0, r1: the axes (of the broadcast result, ascending) over which the gradients of x (shape s0)
// and y (shape s1) must be summed. TF's rules: identical shapes need no reduction; otherwise, with
// both shapes padded with leading 1s, axis j goes to r_i when input i has size 1 there and some
// input does not, and to both when every input has size 1 there.
class BroadcastGradientArgsOp : public OpKernel {
 public:
  explicit BroadcastGradientArgsOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
  }

  void Compute(OpKernelContext* ctx) override {
    std::vector<int64_t> s[2];
    for (int i = 0; i < 2; ++i) {
      const Tensor& t = ctx->input(i);
      OP_REQUIRES(ctx, t.dims() == 1,
                  errors::InvalidArgument("In[", i, "] must be a vector.",
                                          t.shape().DebugString()));
      OP_REQUIRES_OK(ctx, array_util::IntValues(t, "shape", &s[i]));
    }
    std::vector<int64_t> r[2];
    if (s[0] != s[1]) {
      const size_t rank = std::max(s[0].size(), s[1].size());
      std::vector<int64_t> p[2];
      for (int i = 0; i < 2; ++i) {
        p[i].assign(rank - s[i].size(), 1);
        p[i].insert(p[i].end(), s[i].begin(), s[i].end());
      }
      for (size_t j = 0; j < rank; ++j) {
        const int64_t a = p[0][j], b = p[1][j];
        OP_REQUIRES(ctx, a == b || a == 1 || b == 1,
                    errors::InvalidArgument("Incompatible shapes: [", absl::StrJoin(s[0], ","),
                                            "] vs. [", absl::StrJoin(s[1], ","), "]"));
        if (a == 1 && b == 1) {
          r[0].push_back(static_cast<int64_t>(j));
          r[1].push_back(static_cast<int64_t>(j));
        } else if (a == 1) {
          r[0].push_back(static_cast<int64_t>(j));
        } else if (b == 1) {
          r[1].push_back(static_cast<int64_t>(j));
        }
      }
    }
    for (int i = 0; i < 2; ++i) {
      Tensor* out = nullptr;
      OP_REQUIRES_OK(ctx,
                     ctx->allocate_output(i, TensorShape({int64_t(r[i].size())}), &out));
      OP_REQUIRES_OK(ctx, array_util::SetIntValues(r[i], "BroadcastGradientArgs", out));
    }
  }
};
REGISTER_KERNEL_BUILDER(Name("BroadcastGradientArgs").Device(DEVICE_CPU),
                        BroadcastGradientArgsOp);

}  // namespace
}  // namespace tensorflux
