// Launchers of the GPU reductions (reduce.cu), used by the Sum/Mean/Prod/Max/Min kernels
// (reduction_ops.cc) and BiasAddGrad (nn_ops.cc). Semantics are the CPU kernels'
// (kernels/cpu/reduction_ops.cc): Mean divides the sum by the number of reduced elements
// (0/0 = NaN for an empty reduction), Max/Min propagate NaN and give -inf/+inf when empty.
// float accumulates in float, double in double.
//
// A reduction is described by its groups (kernels/shared/reduction_shape.h): alternating runs
// of kept and reduced dims. Output element o (row-major over the kept groups) is the reduction of
// the input elements at kept offset(o) + reduced offset(r) over the reduced index r. When the
// innermost group is reduced a warp reduces each output (coalesced along r); when it is kept a
// thread reduces each output (coalesced along o). Long reductions with few outputs are split
// into chunks whose partials (scratch memory) a second pass combines.
#pragma once

#include <cstdint>

#include "tensorflux/kernels/cuda/launch_common.h"

namespace tensorflux {
namespace gpu {

enum class ReduceKind : int { kSum, kMean, kProd, kMax, kMin };

inline constexpr int kMaxReduceGroups = 8;  // of each kind (kept, reduced)

struct ReducePlan {
  int kept_rank = 0, red_rank = 0;
  int64_t kept_sizes[kMaxReduceGroups] = {}, kept_strides[kMaxReduceGroups] = {};
  int64_t red_sizes[kMaxReduceGroups] = {}, red_strides[kMaxReduceGroups] = {};
  int64_t out_n = 1, red_n = 1;  // outputs; reduced elements per output
  bool inner_reduced = false;
  int64_t chunks = 1;  // chunks of the reduced range per output (> 1: two passes)
};

// The plan for `groups` groups (sizes and reduced flags, outermost first; groups of size 1 are
// ignored). False when there are more than kMaxReduceGroups groups of one kind.
bool MakeReducePlan(const int64_t* sizes, const bool* reduced, int groups, ReducePlan* plan);

// Bytes of scratch memory LaunchReduce needs for `plan` (0 when it runs in one pass).
int64_t ReduceScratchBytes(const ReducePlan& plan, ElemType t);

// out[o] = the reduction of `in` for every output o < plan.out_n (float or double).
cudaError_t LaunchReduce(ReduceKind k, ElemType t, const void* in, void* out,
                         const ReducePlan& plan, void* scratch, cudaStream_t stream);

}  // namespace gpu
}  // namespace tensorflux
