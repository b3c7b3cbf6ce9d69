// Launchers of the elementwise GPU kernels (cwise.cu), called by the host kernels in
// cwise_ops.cc. Semantics are the CPU functors' (kernels/cpu/cwise_functors*.h): the same
// formulas, NaN-propagating Maximum/Minimum/Relu/Relu6, FloorMod with the divisor's sign, and
// TF's input order for the *Grad ops ((gradients, features), (gradients, outputs) or (y, dy)).
// Element types: float and double; bool for the logical ops. Comparisons write bool.
// Every launcher returns the launch's cudaError_t (cudaGetLastError after the launch).
#pragma once

#include <cstdint>

#include "tensorflux/kernels/cuda/launch_common.h"

namespace tensorflux {
namespace gpu {

enum class UnaryKind : int {
  kNeg, kSquare, kSqrt, kExp, kLog, kAbs, kSign, kReciprocal, kRsqrt, kLog1p, kTanh, kSigmoid,
  kErf, kCos, kSin, kRelu, kRelu6, kLeakyRelu, kElu, kSelu, kSoftplus, kLogicalNot,
};

enum class BinaryKind : int {
  kAdd, kSub, kMul, kRealDiv, kMaximum, kMinimum, kPow, kSquaredDifference, kFloorDiv, kFloorMod,
  kLess, kLessEqual, kGreater, kGreaterEqual, kEqual, kNotEqual, kLogicalAnd, kLogicalOr,
  kReluGrad, kRelu6Grad, kLeakyReluGrad, kSoftplusGrad, kEluGrad, kSeluGrad, kTanhGrad,
  kSigmoidGrad, kRsqrtGrad, kSqrtGrad, kReciprocalGrad,
};

// True for the kinds whose output is bool (comparisons, logical ops).
bool BinaryOutputsBool(BinaryKind k);

// Collapsed broadcast (kernels/shared/cwise_shape.h) of at most kMaxBroadcastDims dims.
inline constexpr int kMaxBroadcastDims = 8;
struct BroadcastIndex {
  int rank = 0;
  int64_t dims[kMaxBroadcastDims] = {};
  int64_t x_strides[kMaxBroadcastDims] = {};
  int64_t y_strides[kMaxBroadcastDims] = {};
};

// y[i] = f(x[i]), i < n. `alpha`: LeakyRelu's attr. y may be x.
cudaError_t LaunchUnary(UnaryKind k, ElemType t, double alpha, const void* x, void* y, int64_t n,
                        cudaStream_t stream);

// z[i] = f(x[x_scalar ? 0 : i], y[y_scalar ? 0 : i]), i < n. z may be x or y (when not scalar).
cudaError_t LaunchBinaryFlat(BinaryKind k, ElemType t, double alpha, const void* x, bool x_scalar,
                             const void* y, bool y_scalar, void* z, int64_t n,
                             cudaStream_t stream);

// z[i] = f(x[xo(i)], y[yo(i)]) over the broadcast index space (n = product of bc.dims).
cudaError_t LaunchBinaryBroadcast(BinaryKind k, ElemType t, double alpha, const void* x,
                                  const void* y, void* z, const BroadcastIndex& bc, int64_t n,
                                  cudaStream_t stream);

// out[i] = sum of inputs[j][i] over j < count (count in 1..kMaxAddNInputs), in input order.
// out may be one of the inputs.
inline constexpr int kMaxAddNInputs = 16;
struct AddNInputs {
  const void* ptrs[kMaxAddNInputs] = {};
  int count = 0;
};
cudaError_t LaunchAddN(ElemType t, const AddNInputs& in, void* out, int64_t n,
                       cudaStream_t stream);

}  // namespace gpu
}  // namespace tensorflux
