// CPU kernels: Transpose (every dtype, through array_copy's tiled box copy; a permutation that
// keeps the memory order, e.g. moving size-1 dims, shares the input buffer) and
// InvertPermutation.
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/cpu/array_copy.h"
#include "tensorflux/ops/array_shape_util.h"

namespace tensorflux {
namespace {

using array_copy::BoxSpec;

// INVALID_ARGUMENT unless `perm` is a permutation of [0, n).
Status CheckPermutation(const std::vector<int64_t>& perm, std::string_view what) {
  const int64_t n = static_cast<int64_t>(perm.size());
  std::vector<bool> seen(n, false);
  for (int64_t i = 0; i < n; ++i) {
    if (perm[i] < 0 || perm[i] >= n) {
      return errors::InvalidArgument(what, "[", i, "] = ", perm[i], " is out of range [0, ", n,
                                     ")");
    }
    if (seen[perm[i]]) {
      return errors::InvalidArgument(perm[i], " is duplicated in ", what, ": not a permutation");
    }
    seen[perm[i]] = true;
  }
  return OkStatus();
}

class TransposeOp : public OpKernel {
 public:
  explicit TransposeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& perm_t = ctx->input(1);
    OP_REQUIRES(ctx, perm_t.dims() == 1,
                errors::InvalidArgument("perm must be a vector, not ",
                                        perm_t.shape().DebugString()));
    std::vector<int64_t> perm;
    OP_REQUIRES_OK(ctx, array_util::IntValues(perm_t, "perm", &perm));
    const int rank = x.dims();
    OP_REQUIRES(ctx, static_cast<int64_t>(perm.size()) == rank,
                errors::InvalidArgument("transpose expects a vector of size ", rank,
                                        ". But input(1) is a vector of size ", perm.size()));
    OP_REQUIRES_OK(ctx, CheckPermutation(perm, "perm"));
    TensorShape out_shape;
    for (int i = 0; i < rank; ++i) out_shape.AddDim(x.dim_size(perm[i]));

    // Same memory order when the dims larger than 1 keep their relative order.
    bool same_order = true;
    for (int i = 0, last = -1; i < rank; ++i) {
      if (x.dim_size(perm[i]) == 1) continue;
      if (perm[i] < last) same_order = false;
      last = static_cast<int>(perm[i]);
    }
    if (same_order) {
      Tensor out;
      out.CopyFrom(x, out_shape);
      ctx->set_output(0, std::move(out));
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    const auto in_strides = array_copy::RowMajorStrides(x.shape().dim_sizes());
    const auto out_strides = array_copy::RowMajorStrides(out_shape.dim_sizes());
    BoxSpec spec;
    for (int i = 0; i < rank; ++i) spec.AddDim(out_shape.dim_size(i), in_strides[perm[i]], out_strides[i]);
    ThreadPool* pool = ctx->intra_op_thread_pool();
    OP_REQUIRES_OK(ctx, array_copy::VisitElementType(x.dtype(), "Transpose", [&](auto tag) {
      using S = typename decltype(tag)::type;
      array_copy::BoxCopy<S>(pool, array_copy::Elements<S>(x), array_copy::Elements<S>(*out),
                             spec);
      return OkStatus();
    }));
  }
};
REGISTER_KERNEL_BUILDER(Name("Transpose").Device(DEVICE_CPU), TransposeOp);

class InvertPermutationOp : public OpKernel {
 public:
  explicit InvertPermutationOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    OP_REQUIRES(ctx, x.dims() == 1,
                errors::InvalidArgument("invert_permutation expects a 1D vector, got shape ",
                                        x.shape().DebugString()));
    std::vector<int64_t> perm;
    OP_REQUIRES_OK(ctx, array_util::IntValues(x, "x", &perm));
    OP_REQUIRES_OK(ctx, CheckPermutation(perm, "x"));
    std::vector<int64_t> inv(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out));
    OP_REQUIRES_OK(ctx, array_util::SetIntValues(inv, "InvertPermutation", out));
  }
};
REGISTER_KERNEL_BUILDER(Name("InvertPermutation").Device(DEVICE_CPU), InvertPermutationOp);

}  // namespace
}  // namespace tensorflux
