// Axes and output shape of the reduction ops (Sum, Mean, Prod, Max, Min, All, Any), shared by
// the CPU kernels (kernels/cpu/reduction_ops.cc) and the GPU kernels
// (kernels/cuda/reduction_ops.cc).
//
// The input's dims are grouped into runs of adjacent kept or adjacent reduced dims (size-1 dims
// dropped), so any set of axes becomes an alternating list of groups, outermost first:
// [2, 3, 4, 5] reduced over {1, 2} is groups (2 kept, 12 reduced, 5 kept).
#pragma once

#include <cstdint>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/tensor_shape.h"

namespace tensorflux {

class OpKernel;

struct ReductionShape {
  TensorShape out_shape;  // keep_dims: reduced dims as 1; else dropped
  // The groups; never empty (an input of only size-1 dims is one kept group of 1).
  std::vector<int64_t> sizes;
  std::vector<bool> reduced;
  // True when the values are unchanged (only size-1 dims are reduced, the input is not empty):
  // the output is the input reshaped.
  bool identity = false;
};

// Reads `axes` (the reduction_indices input: an int32/int64 scalar or vector in host memory,
// each value in [-rank, rank), no dim twice) and computes the groups of `input`.
// INVALID_ARGUMENT naming node `k` for axes of rank > 1, an axis out of range or a repeated dim.
Status ComputeReductionShape(const OpKernel& k, const TensorShape& input, const Tensor& axes,
                             bool keep_dims, ReductionShape* out);

class OpKernelContext;
// When r.identity: sets output 0 to `input` reshaped (the same buffer) and returns true.
bool SetIdentityReduction(OpKernelContext* ctx, const Tensor& input, const ReductionShape& r);

}  // namespace tensorflux
