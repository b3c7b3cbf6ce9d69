// CPU kernels of the shape family: Reshape (shares the input buffer), Shape, Size, Rank.
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace {

// Reads Reshape's `shape` input (1-D, or a scalar meaning one dim) as int64 sizes.
std::vector<int64_t> ReadSizes(const Tensor& sizes) {
  std::vector<int64_t> out;
  out.reserve(sizes.NumElements());
  if (sizes.dtype() == DT_INT32) {
    for (int32_t v : sizes.flat<int32_t>()) out.push_back(v);
  } else {
    for (int64_t v : sizes.flat<int64_t>()) out.push_back(v);
  }
  return out;
}

// The output shape of reshaping a tensor of `in` to `sizes` (TF's rules: at most one -1, which
// is inferred; other sizes >= 0; element counts must match). Zero sizes are left out of the
// product used to infer the -1 so that shapes like [0, -1] still infer from the input's non-zero
// dims.
StatusOr<TensorShape> ReshapeOutputShape(const TensorShape& in, absl::Span<const int64_t> sizes) {
  if (sizes.size() > TensorShape::kMaxDims) {
    return errors::InvalidArgument(sizes.size(), " > max ", TensorShape::kMaxDims,
                                   " output dims supported");
  }
  int unknown = -1;
  int64_t product = 1;
  bool sizes_has_zero = false;
  std::vector<int64_t> dims(sizes.begin(), sizes.end());
  for (int d = 0; d < static_cast<int>(dims.size()); ++d) {
    const int64_t size = dims[d];
    if (size == -1) {
      if (unknown != -1) {
        return errors::InvalidArgument("Only one input size may be -1, not both ", unknown,
                                       " and ", d);
      }
      unknown = d;
      dims[d] = 1;
    } else if (size < 0) {
      return errors::InvalidArgument("Size ", d, " must be non-negative, not ", size);
    } else if (size == 0) {
      sizes_has_zero = true;
    } else {
      if (product > std::numeric_limits<int64_t>::max() / size) {
        return errors::InvalidArgument("Requested shape has too many elements");
      }
      product *= size;
    }
  }
  if (unknown != -1) {
    int64_t in_elems = 1;
    bool in_has_zero = false;
    for (int64_t d : in.dim_sizes()) {
      if (d > 0 || !sizes_has_zero) {
        in_elems *= d;
      } else {
        in_has_zero = true;
      }
    }
    const int64_t missing = in_elems / product;
    if (!in_has_zero && product * missing != in_elems) {
      return errors::InvalidArgument("Input to reshape is a tensor with ", in_elems,
                                     " values, but the requested shape requires a multiple of ",
                                     product);
    }
    dims[unknown] = missing;
  }
  TX_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Make(dims));
  if (shape.num_elements() != in.num_elements()) {
    return errors::InvalidArgument("Input to reshape is a tensor with ", in.num_elements(),
                                   " values, but the requested shape has ", shape.num_elements());
  }
  return shape;
}

class ReshapeOp : public OpKernel {
 public:
  explicit ReshapeOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& sizes = ctx->input(1);
    OP_REQUIRES(ctx, sizes.dims() <= 1,
                errors::InvalidArgument("sizes input must be 1-D, not ",
                                        sizes.shape().DebugString()));
    auto shape = ReshapeOutputShape(ctx->input(0).shape(), ReadSizes(sizes));
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor out;
    // Cannot fail: the element counts were checked above.
    out.CopyFrom(ctx->input(0), *shape);
    ctx->set_output(0, std::move(out));
  }
};
REGISTER_KERNEL_BUILDER(Name("Reshape").Device(DEVICE_CPU), ReshapeOp);

// Writes `values` into output 0 as the kernel's out type (int32 or int64). INVALID_ARGUMENT when a
// value does not fit int32.
void SetIntOutput(OpKernelContext* ctx, absl::Span<const int64_t> values, bool scalar) {
  const TensorShape shape = scalar ? TensorShape() : TensorShape({int64_t(values.size())});
  Tensor* out = nullptr;
  OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
  if (out->dtype() == DT_INT64) {
    std::copy(values.begin(), values.end(), out->data<int64_t>());
    return;
  }
  int32_t* p = out->data<int32_t>();
  for (size_t i = 0; i < values.size(); ++i) {
    OP_REQUIRES(ctx, values[i] <= std::numeric_limits<int32_t>::max(),
                errors::InvalidArgument(ctx->op_kernel().type_string(), " of node '",
                                        ctx->op_kernel().name(),
                                        "': output type is int32 but the value ", values[i],
                                        " does not fit; use out_type=int64"));
    p[i] = static_cast<int32_t>(values[i]);
  }
}

class ShapeOp : public OpKernel {
 public:
  explicit ShapeOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    SetIntOutput(ctx, ctx->input(0).shape().dim_sizes(), /*scalar=*/false);
  }
};
REGISTER_KERNEL_BUILDER(Name("Shape").Device(DEVICE_CPU), ShapeOp);

class SizeOp : public OpKernel {
 public:
  explicit SizeOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    const int64_t n = ctx->input(0).NumElements();
    SetIntOutput(ctx, absl::Span<const int64_t>(&n, 1), /*scalar=*/true);
  }
};
REGISTER_KERNEL_BUILDER(Name("Size").Device(DEVICE_CPU), SizeOp);

class RankOp : public OpKernel {
 public:
  explicit RankOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    const int64_t r = ctx->input(0).dims();
    SetIntOutput(ctx, absl::Span<const int64_t>(&r, 1), /*scalar=*/true);
  }
};
REGISTER_KERNEL_BUILDER(Name("Rank").Device(DEVICE_CPU), RankOp);

}  // namespace
}  // namespace tensorflux
