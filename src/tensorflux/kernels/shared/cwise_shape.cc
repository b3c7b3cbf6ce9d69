// kernels/shared/cwise_shape.h: broadcasting with dim collapsing, dtype and same-shape checks.

#include "tensorflux/kernels/shared/cwise_shape.h"

#include <algorithm>

#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace cwise {
namespace {

Status Incompatible(const TensorShape& x, const TensorShape& y) {
  return errors::InvalidArgument("Incompatible shapes: ", x.DebugString(), " vs. ",
                                 y.DebugString());
}

void SetFlat(BinaryBroadcast* bc, const TensorShape& out, int64_t x_stride, int64_t y_stride) {
  bc->out_shape = out;
  bc->dims.assign({out.num_elements()});
  bc->x_strides.assign({x_stride});
  bc->y_strides.assign({y_stride});
}

}  // namespace

Status ComputeBinaryBroadcast(const TensorShape& x, const TensorShape& y, BinaryBroadcast* bc) {
  // Fast paths: same shape, or a rank-0 scalar on one side.
  if (x == y) {
    SetFlat(bc, x, 1, 1);
    return OkStatus();
  }
  if (x.dims() == 0) {
    SetFlat(bc, y, 0, 1);
    return OkStatus();
  }
  if (y.dims() == 0) {
    SetFlat(bc, x, 1, 0);
    return OkStatus();
  }

  const int rank = std::max(x.dims(), y.dims());
  absl::InlinedVector<int64_t, 8> out_dims(rank);
  // Per output dim (outermost first): whether x / y are broadcast along it.
  absl::InlinedVector<bool, 8> xb(rank), yb(rank);
  for (int i = 0; i < rank; ++i) {
    const int xi = i - (rank - x.dims()), yi = i - (rank - y.dims());
    const int64_t xd = xi >= 0 ? x.dim_size(xi) : 1;
    const int64_t yd = yi >= 0 ? y.dim_size(yi) : 1;
    if (xd == yd) {
      out_dims[i] = xd;
    } else if (xd == 1) {
      out_dims[i] = yd;
    } else if (yd == 1) {
      out_dims[i] = xd;
    } else {
      return Incompatible(x, y);
    }
    xb[i] = xd == 1;
    yb[i] = yd == 1;
  }
  auto shape = TensorShape::Make(out_dims);
  if (!shape.ok()) return Incompatible(x, y);
  if (shape->num_elements() == 0) {
    SetFlat(bc, *shape, 1, 1);
    return OkStatus();
  }
  bc->out_shape = *std::move(shape);

  // Collapse, innermost first: drop size-1 output dims, merge neighbours with the same pattern.
  bc->dims.clear();
  bc->x_strides.clear();
  bc->y_strides.clear();
  absl::InlinedVector<std::pair<bool, bool>, 8> pattern;
  for (int i = rank - 1; i >= 0; --i) {
    if (out_dims[i] == 1) continue;
    if (!pattern.empty() && pattern.back() == std::make_pair(xb[i], yb[i])) {
      bc->dims.back() *= out_dims[i];
    } else {
      bc->dims.push_back(out_dims[i]);
      pattern.emplace_back(xb[i], yb[i]);
    }
  }
  if (bc->dims.empty()) {  // every dim is 1
    bc->dims.push_back(1);
    pattern.emplace_back(false, false);
  }
  int64_t xs = 1, ys = 1;
  for (size_t k = 0; k < bc->dims.size(); ++k) {
    bc->x_strides.push_back(pattern[k].first ? 0 : xs);
    bc->y_strides.push_back(pattern[k].second ? 0 : ys);
    if (!pattern[k].first) xs *= bc->dims[k];
    if (!pattern[k].second) ys *= bc->dims[k];
  }
  std::reverse(bc->dims.begin(), bc->dims.end());
  std::reverse(bc->x_strides.begin(), bc->x_strides.end());
  std::reverse(bc->y_strides.begin(), bc->y_strides.end());
  return OkStatus();
}

Status CheckInputDtypes(const OpKernel& k, OpKernelContext* ctx, DataType expected) {
  for (int i = 0; i < ctx->num_inputs(); ++i) {
    if (ctx->input(i).dtype() != expected) {
      return errors::InvalidArgument(k.type_string(), " node '", k.name(), "': input ", i,
                                     " has dtype ", DataTypeString(ctx->input(i).dtype()),
                                     ", the kernel expects ", DataTypeString(expected));
    }
  }
  return OkStatus();
}

Status CheckSameShape(const OpKernel& k, const TensorShape& a, int i, const TensorShape& b) {
  if (a == b) return OkStatus();
  return errors::InvalidArgument("Inputs to operation ", k.name(), " of type ", k.type_string(),
                                 " must have the same size and shape.  Input 0: ",
                                 a.DebugString(), " != input ", i, ": ", b.DebugString());
}

}  // namespace cwise
}  // namespace tensorflux
