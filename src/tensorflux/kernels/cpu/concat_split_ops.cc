// CPU kernels of the concat/split family: ConcatV2, Concat (TF1, axis first), ConcatOffset,
// Split, SplitV, Pack, Unpack. Every dtype goes through one path: the tensors are viewed as
// [outer, inner_i] matrices (outer = product of the dims before the axis) and rows are copied with
// array_copy::BoxCopy. Split/Unpack outputs that are contiguous pieces of the input (nothing but
// size-1 dims before the axis) share the input's buffer.
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/cpu/array_copy.h"
#include "tensorflux/ops/array_shape_util.h"

namespace tensorflux {
namespace {

using array_copy::BoxSpec;

int64_t Product(absl::Span<const int64_t> dims, int begin, int end) {
  int64_t p = 1;
  for (int d = begin; d < end; ++d) p *= dims[d];
  return p;
}

// out[o, off_i + j] = in_i[o, j] for inputs of [outer, inner[i]] into out of [outer, sum(inner)].
Status ConcatRows(OpKernelContext* ctx, const std::vector<const Tensor*>& ins,
                  const std::vector<int64_t>& inner, int64_t outer, Tensor* out) {
  int64_t row = 0;
  for (int64_t v : inner) row += v;
  ThreadPool* pool = ctx->intra_op_thread_pool();
  return array_copy::VisitElementType(out->dtype(), ctx->op_kernel().type_string(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    S* dst = array_copy::Elements<S>(*out);
    int64_t col = 0;
    for (size_t i = 0; i < ins.size(); ++i) {
      if (inner[i] > 0 && outer > 0) {
        BoxSpec spec;
        spec.AddDim(outer, inner[i], row);
        spec.AddDim(inner[i], 1, 1);
        array_copy::BoxCopy<S>(pool, array_copy::Elements<S>(*ins[i]), dst + col, spec);
      }
      col += inner[i];
    }
    return OkStatus();
  });
}

// Splits `in` ([outer, sum(inner)] viewed) along its columns into outputs 0..n-1 of the given
// shapes. Shares the input buffer when outer == 1.
void SplitRows(OpKernelContext* ctx, const Tensor& in, const std::vector<TensorShape>& shapes,
               const std::vector<int64_t>& inner, int64_t outer) {
  int64_t row = 0;
  for (int64_t v : inner) row += v;
  if (outer == 1 && in.NumElements() > 0) {
    Tensor flat;
    flat.CopyFrom(in, TensorShape({in.NumElements()}));
    int64_t col = 0;
    for (size_t i = 0; i < shapes.size(); ++i) {
      Tensor piece = flat.Slice(col, col + inner[i]);
      Tensor out;
      out.CopyFrom(piece, shapes[i]);
      ctx->set_output(static_cast<int>(i), std::move(out));
      col += inner[i];
    }
    return;
  }
  ThreadPool* pool = ctx->intra_op_thread_pool();
  std::vector<Tensor*> outs(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    OP_REQUIRES_OK(ctx, ctx->allocate_output(static_cast<int>(i), shapes[i], &outs[i]));
  }
  OP_REQUIRES_OK(ctx, array_copy::VisitElementType(in.dtype(), ctx->op_kernel().type_string(),
                                                   [&](auto tag) {
    using S = typename decltype(tag)::type;
    const S* src = array_copy::Elements<S>(in);
    int64_t col = 0;
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (inner[i] > 0 && outer > 0) {
        BoxSpec spec;
        spec.AddDim(outer, row, inner[i]);
        spec.AddDim(inner[i], 1, 1);
        array_copy::BoxCopy<S>(pool, src + col, array_copy::Elements<S>(*outs[i]), spec);
      }
      col += inner[i];
    }
    return OkStatus();
  }));
}

// ConcatV2 (axis last) and Concat (axis first).
class ConcatOp : public OpKernel {
 public:
  explicit ConcatOp(OpKernelConstruction* ctx, bool axis_first)
      : OpKernel(ctx), axis_first_(axis_first) {}

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() - 1;
    const int axis_index = axis_first_ ? 0 : n;
    const int first = axis_first_ ? 1 : 0;
    const Tensor& axis_t = ctx->input(axis_index);
    OP_REQUIRES(ctx, axis_t.dims() == 0,
                errors::InvalidArgument("Concat dim tensor should be a scalar integer, but got "
                                        "shape ", axis_t.shape().DebugString()));
    int64_t axis = 0;
    OP_REQUIRES_OK(ctx, array_util::IntScalar(axis_t, "concat axis", &axis));
    const Tensor& x0 = ctx->input(first);
    const int rank = x0.dims();
    OP_REQUIRES(ctx, rank >= 1,
                errors::InvalidArgument("Can't concatenate scalars (use tx.stack instead)"));
    OP_REQUIRES_OK(ctx, array_util::NormalizeAxis(axis, rank, "ConcatOp : axis", &axis));
    std::vector<int64_t> out_dims(x0.shape().dim_sizes().begin(), x0.shape().dim_sizes().end());
    out_dims[axis] = 0;
    std::vector<const Tensor*> ins;
    std::vector<int64_t> inner;
    const int64_t outer = Product(x0.shape().dim_sizes(), 0, static_cast<int>(axis));
    for (int i = 0; i < n; ++i) {
      const Tensor& x = ctx->input(first + i);
      OP_REQUIRES(ctx, x.dims() == rank,
                  errors::InvalidArgument("ConcatOp : Ranks of all input tensors should match: "
                                          "shape[0] = ", x0.shape().DebugString(), " vs. shape[",
                                          i, "] = ", x.shape().DebugString()));
      for (int d = 0; d < rank; ++d) {
        OP_REQUIRES(ctx, d == axis || x.dim_size(d) == x0.dim_size(d),
                    errors::InvalidArgument("ConcatOp : Dimension ", d,
                                            " in both shapes must be equal: shape[0] = ",
                                            x0.shape().DebugString(), " vs. shape[", i, "] = ",
                                            x.shape().DebugString()));
      }
      out_dims[axis] += x.dim_size(axis);
      ins.push_back(&x);
      inner.push_back(Product(x.shape().dim_sizes(), static_cast<int>(axis), rank));
    }
    auto shape = TensorShape::Make(out_dims);
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    if (out->NumElements() == 0) return;
    OP_REQUIRES_OK(ctx, ConcatRows(ctx, ins, inner, outer, out));
  }

 private:
  bool axis_first_;
};
struct ConcatV2Op : ConcatOp {
  explicit ConcatV2Op(OpKernelConstruction* c) : ConcatOp(c, false) {}
};
struct ConcatV1Op : ConcatOp {
  explicit ConcatV1Op(OpKernelConstruction* c) : ConcatOp(c, true) {}
};
REGISTER_KERNEL_BUILDER(Name("ConcatV2").Device(DEVICE_CPU), ConcatV2Op);
REGISTER_KERNEL_BUILDER(Name("Concat").Device(DEVICE_CPU), ConcatV1Op);

class ConcatOffsetOp : public OpKernel {
 public:
  explicit ConcatOffsetOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    int64_t axis = 0;
    OP_REQUIRES_OK(ctx, array_util::IntScalar(ctx->input(0), "concat_dim", &axis));
    const int n = ctx->num_inputs() - 1;
    std::vector<int64_t> s0;
    const Tensor& t0 = ctx->input(1);
    OP_REQUIRES(ctx, t0.dims() == 1,
                errors::InvalidArgument("input 0 should be a vector, got shape ",
                                        t0.shape().DebugString()));
    OP_REQUIRES_OK(ctx, array_util::IntValues(t0, "shape", &s0));
    const int64_t rank = static_cast<int64_t>(s0.size());
    OP_REQUIRES_OK(ctx, array_util::NormalizeAxis(axis, rank, "concat_dim", &axis));
    int64_t offset = 0;
    for (int i = 0; i < n; ++i) {
      std::vector<int64_t> s;
      const Tensor& t = ctx->input(1 + i);
      OP_REQUIRES(ctx, t.dims() == 1 && t.NumElements() == rank,
                  errors::InvalidArgument("input ", i, " should contain ", rank,
                                          " elements, but got shape ", t.shape().DebugString()));
      OP_REQUIRES_OK(ctx, array_util::IntValues(t, "shape", &s));
      std::vector<int64_t> off(rank, 0);
      for (int64_t d = 0; d < rank; ++d) {
        if (d == axis) {
          off[d] = offset;
          OP_REQUIRES(ctx, s[d] >= 0 && !__builtin_add_overflow(offset, s[d], &offset),
                      errors::InvalidArgument("input ", i, " has a bad size ", s[d],
                                              " along concat_dim"));
        } else {
          OP_REQUIRES(ctx, s[d] == s0[d],
                      errors::InvalidArgument("input[", i, ",", d, "] mismatch: ", s[d],
                                              " vs. ", s0[d]));
        }
      }
      Tensor* out = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, t.shape(), &out));
      OP_REQUIRES_OK(ctx, array_util::SetIntValues(off, "ConcatOffset", out));
    }
  }
};
REGISTER_KERNEL_BUILDER(Name("ConcatOffset").Device(DEVICE_CPU), ConcatOffsetOp);

// Reads a 1-D size_splits of int8/int32/int64.
Status ReadSplitSizes(const Tensor& t, std::vector<int64_t>* out) {
  if (t.dims() != 1) {
    return errors::InvalidArgument("size_splits must be a vector, got shape ",
                                   t.shape().DebugString());
  }
  if (t.dtype() == DT_INT8) {
    out->assign(t.flat<int8_t>().begin(), t.flat<int8_t>().end());
    return OkStatus();
  }
  return array_util::IntValues(t, "size_splits", out);
}

// Split (even, axis first) and SplitV (sizes, axis last).
class SplitOp : public OpKernel {
 public:
  SplitOp(OpKernelConstruction* ctx, bool sizes) : OpKernel(ctx), sizes_(sizes) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(sizes_ ? 0 : 1);
    const Tensor& axis_t = ctx->input(sizes_ ? 2 : 0);
    const int n = ctx->num_outputs();
    int64_t axis = 0;
    OP_REQUIRES_OK(ctx, array_util::IntScalar(axis_t, "split_dim", &axis));
    const int rank = value.dims();
    OP_REQUIRES(ctx, rank >= 1, errors::InvalidArgument("Can't split a scalar"));
    OP_REQUIRES_OK(ctx, array_util::NormalizeAxis(axis, rank, "split_dim", &axis));
    const int64_t dim = value.dim_size(axis);
    std::vector<int64_t> sizes(n);
    if (!sizes_) {
      OP_REQUIRES(ctx, dim % n == 0,
                  errors::InvalidArgument("Number of ways to split should evenly divide the "
                                          "split dimension, but got split_dim ", axis,
                                          " (size = ", dim, ") and num_split ", n));
      std::fill(sizes.begin(), sizes.end(), dim / n);
    } else {
      OP_REQUIRES_OK(ctx, ReadSplitSizes(ctx->input(1), &sizes));
      OP_REQUIRES(ctx, static_cast<int>(sizes.size()) == n,
                  errors::InvalidArgument("Length of size_splits should be equal to num_split "
                                          "(", n, "), got ", sizes.size()));
      int unknown = -1;
      int64_t total = 0;
      for (int i = 0; i < n; ++i) {
        if (sizes[i] == -1) {
          OP_REQUIRES(ctx, unknown < 0,
                      errors::InvalidArgument("Only one dimensions can have a value of -1; got "
                                              "-1 at ", unknown, " and ", i));
          unknown = i;
        } else {
          OP_REQUIRES(ctx, sizes[i] >= 0 && sizes[i] <= dim,
                      errors::InvalidArgument("size_splits[", i, "] = ", sizes[i],
                                              " is not in [0, ", dim, "]"));
          total += sizes[i];
        }
      }
      OP_REQUIRES(ctx, (unknown < 0 && total == dim) || (unknown >= 0 && total <= dim),
                  errors::InvalidArgument("Determined shape must either match input shape "
                                          "along split_dim exactly if fully specified, or be "
                                          "less than the size of the input along split_dim if "
                                          "not fully specified.  Got: ", total, " vs. ", dim));
      if (unknown >= 0) sizes[unknown] = dim - total;
    }
    const auto dims = value.shape().dim_sizes();
    const int64_t outer = Product(dims, 0, static_cast<int>(axis));
    const int64_t after = Product(dims, static_cast<int>(axis) + 1, rank);
    std::vector<TensorShape> shapes;
    std::vector<int64_t> inner;
    for (int i = 0; i < n; ++i) {
      TensorShape s = value.shape();
      s.set_dim(static_cast<int>(axis), sizes[i]);
      shapes.push_back(s);
      inner.push_back(sizes[i] * after);
    }
    SplitRows(ctx, value, shapes, inner, outer);
  }

 private:
  bool sizes_;
};
struct SplitEvenOp : SplitOp {
  explicit SplitEvenOp(OpKernelConstruction* c) : SplitOp(c, false) {}
};
struct SplitVOp : SplitOp {
  explicit SplitVOp(OpKernelConstruction* c) : SplitOp(c, true) {}
};
REGISTER_KERNEL_BUILDER(Name("Split").Device(DEVICE_CPU), SplitEvenOp);
REGISTER_KERNEL_BUILDER(Name("SplitV").Device(DEVICE_CPU), SplitVOp);

class PackOp : public OpKernel {
 public:
  explicit PackOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    const Tensor& x0 = ctx->input(0);
    const int rank = x0.dims() + 1;
    int64_t axis = 0;
    OP_REQUIRES_OK(ctx, array_util::NormalizeAxis(axis_, rank, "Pack's axis", &axis));
    std::vector<const Tensor*> ins;
    for (int i = 0; i < n; ++i) {
      const Tensor& x = ctx->input(i);
      OP_REQUIRES(ctx, x.shape() == x0.shape(),
                  errors::InvalidArgument("Shapes of all inputs must match: values[0].shape = ",
                                          x0.shape().DebugString(), " != values[", i,
                                          "].shape = ", x.shape().DebugString()));
      ins.push_back(&x);
    }
    std::vector<int64_t> out_dims(x0.shape().dim_sizes().begin(), x0.shape().dim_sizes().end());
    out_dims.insert(out_dims.begin() + axis, n);
    auto shape = TensorShape::Make(out_dims);
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    if (out->NumElements() == 0) return;
    const int64_t outer = Product(x0.shape().dim_sizes(), 0, static_cast<int>(axis));
    const int64_t inner = Product(x0.shape().dim_sizes(), static_cast<int>(axis), rank - 1);
    OP_REQUIRES_OK(ctx, ConcatRows(ctx, ins, std::vector<int64_t>(n, inner), outer, out));
  }

 private:
  int64_t axis_ = 0;
};
REGISTER_KERNEL_BUILDER(Name("Pack").Device(DEVICE_CPU), PackOp);

class UnpackOp : public OpKernel {
 public:
  explicit UnpackOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(0);
    const int n = ctx->num_outputs();
    const int rank = value.dims();
    int64_t axis = 0;
    OP_REQUIRES(ctx, rank >= 1, errors::InvalidArgument("Can't unpack a scalar"));
    OP_REQUIRES_OK(ctx, array_util::NormalizeAxis(axis_, rank, "Unpack's axis", &axis));
    OP_REQUIRES(ctx, value.dim_size(axis) == n,
                errors::InvalidArgument("Input shape axis ", axis, " must equal ", n, ", got shape ",
                                        value.shape().DebugString()));
    TensorShape piece = value.shape();
    piece.RemoveDim(static_cast<int>(axis));
    const auto dims = value.shape().dim_sizes();
    const int64_t outer = Product(dims, 0, static_cast<int>(axis));
    const int64_t inner = Product(dims, static_cast<int>(axis) + 1, rank);
    SplitRows(ctx, value, std::vector<TensorShape>(n, piece), std::vector<int64_t>(n, inner),
              outer);
  }

 private:
  int64_t axis_ = 0;
};
REGISTER_KERNEL_BUILDER(Name("Unpack").Device(DEVICE_CPU), UnpackOp);

}  // namespace
}  // namespace tensorflux
