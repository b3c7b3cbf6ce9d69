#include "tensorflux/kernels/shared/reduction_shape.h"

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace {

std::string NodeLabel(const OpKernel& k) {
  return absl::StrCat(k.type_string(), " node '", k.name(), "'");
}

// Reads the axes input (scalar or 1-D int32/int64) into per-dim flags.
Status ReadReductionAxes(const OpKernel& k, const Tensor& axes, int rank,
                         std::vector<bool>* reduce) {
  if (axes.dims() > 1) {
    return errors::InvalidArgument("reduction_indices must be a scalar or 1-D, not ",
                                   axes.shape().DebugString(), " (", NodeLabel(k), ")");
  }
  if (axes.dtype() != DT_INT32 && axes.dtype() != DT_INT64) {
    return errors::InvalidArgument("reduction_indices must be int32 or int64, not ",
                                   DataTypeString(axes.dtype()), " (", NodeLabel(k), ")");
  }
  reduce->assign(rank, false);
  for (int64_t i = 0; i < axes.NumElements(); ++i) {
    const int64_t a =
        axes.dtype() == DT_INT32 ? int64_t{axes.data<int32_t>()[i]} : axes.data<int64_t>()[i];
    if (a < -rank || a >= rank) {
      return errors::InvalidArgument("Invalid reduction dimension ", a, " for input with ", rank,
                                     " dimensions (", NodeLabel(k), ")");
    }
    const int64_t d = a < 0 ? a + rank : a;
    if ((*reduce)[d]) {  // as TF's kernels: 1 and -1 of a rank-2 input are one dim twice
      return errors::InvalidArgument(
          "Invalid reduction arguments: Axes contains duplicate dimension: ", d, " (",
          NodeLabel(k), ")");
    }
    (*reduce)[d] = true;
  }
  return OkStatus();
}

}  // namespace

Status ComputeReductionShape(const OpKernel& k, const TensorShape& input, const Tensor& axes,
                             bool keep_dims, ReductionShape* r) {
  const int rank = input.dims();
  std::vector<bool> reduce;
  TX_RETURN_IF_ERROR(ReadReductionAxes(k, axes, rank, &reduce));
  std::vector<int64_t> out_dims;
  r->sizes.clear();
  r->reduced.clear();
  for (int d = 0; d < rank; ++d) {
    const int64_t n = input.dim_size(d);
    if (!reduce[d]) {
      out_dims.push_back(n);
    } else if (keep_dims) {
      out_dims.push_back(1);
    }
    if (n == 1) continue;
    if (!r->sizes.empty() && r->reduced.back() == reduce[d]) {
      r->sizes.back() *= n;
    } else {
      r->sizes.push_back(n);
      r->reduced.push_back(reduce[d]);
    }
  }
  TX_ASSIGN_OR_RETURN(r->out_shape, TensorShape::Make(out_dims));
  bool any_reduced = false;
  for (bool b : r->reduced) any_reduced |= b;
  r->identity = !any_reduced && input.num_elements() > 0;
  if (r->sizes.empty()) {
    r->sizes.push_back(1);
    r->reduced.push_back(false);
  }
  return OkStatus();
}

bool SetIdentityReduction(OpKernelContext* ctx, const Tensor& input, const ReductionShape& r) {
  if (!r.identity) return false;
  Tensor out;
  out.CopyFrom(input, r.out_shape);
  ctx->set_output(0, std::move(out));
  return true;
}

}  // namespace tensorflux
