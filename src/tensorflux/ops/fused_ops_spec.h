// The `fused_ops` attr of TensorFlow's _FusedMatMul and _FusedConv2D (created by the remapper,
// passes/remapper.cc; not meant to be written by hand): the contraction's output goes through
// the listed ops in order. Supported here, as TF's CPU kernels: ["BiasAdd"] and
// ["BiasAdd", A] with A one of Relu, Relu6, Elu, LeakyRelu (alpha = the leakyrelu_alpha attr);
// "BiasAdd" takes the one extra input (num_args = 1), a 1-D bias of the output's channel count.
// Shared by the ops' shape functions (ops/math_ops_matmul.cc, ops/conv_ops.cc) and the CPU
// kernels (kernels/cpu/fused_epilogue.h).
#pragma once

#include <cstdint>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor_shape.h"
#include "tensorflux/node_def.pb.h"

namespace tensorflux {

enum class FusedActivation { kNone, kRelu, kRelu6, kElu, kLeakyRelu };

struct FusedOpsSpec {
  FusedActivation activation = FusedActivation::kNone;
  float leakyrelu_alpha = 0.2f;

  // Reads fused_ops, num_args and leakyrelu_alpha. UNIMPLEMENTED naming the node for a
  // combination other than the supported ones (e.g. FusedBatchNorm, or no BiasAdd);
  // INVALID_ARGUMENT for num_args other than 1.
  static StatusOr<FusedOpsSpec> FromNodeDef(const NodeDef& def);
};

// Checks a partial bias shape against the output's channel count (-1: unknown): rank 1 and
// equal sizes when known. INVALID_ARGUMENT naming the node.
Status CheckFusedBiasShape(const NodeDef& def, const PartialTensorShape& bias, int64_t channels);

}  // namespace tensorflux
