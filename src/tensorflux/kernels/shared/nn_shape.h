// Validation of the NN-family kernels (BiasAdd/BiasAddGrad, Softmax/LogSoftmax, the
// softmax cross-entropy ops), shared by the CPU kernels (kernels/cpu/bias_add_op.cc,
// softmax_op.cc, xent_ops.cc) and the GPU kernels (kernels/cuda/nn_ops.cc). Every error is
// INVALID_ARGUMENT "<Op> node '<name>': ...".
#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/tensor_shape.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux::nn_kernels {

// "BiasAdd node 'name'", for error messages.
inline std::string NodeLabel(const OpKernel& k) {
  return absl::StrCat(k.type_string(), " node '", k.name(), "'");
}

// INVALID_ARGUMENT "<Op> node '<name>': <message...>".
template <typename... Args>
Status KernelError(const OpKernel& k, const Args&... args) {
  return errors::InvalidArgument(NodeLabel(k), ": ", args...);
}

// Reads the data_format attr: "NHWC" (channels last) or "NCHW" (channels at dim 1).
Status ReadDataFormat(OpKernelConstruction* ctx, bool* nchw);

// A BiasAdd value (or BiasAddGrad out_backprop) viewed as [outer, C, inner]: NHWC has the
// channels last (inner = 1), NCHW at dim 1 (outer = N, inner = the spatial dims' product).
struct BiasLayout {
  int64_t outer = 1, channels = 1, inner = 1;
};
// The layout of `shape`; rank >= 2 required. An empty shape gives outer = inner = 0.
Status BiasLayoutOf(const OpKernel& k, const TensorShape& shape, bool nchw, BiasLayout* l);
// BiasAdd's checks: the layout of value, bias 1-D with C elements, equal dtypes.
Status CheckBiasAdd(const OpKernel& k, const Tensor& value, const Tensor& bias, bool nchw,
                    BiasLayout* l);

// Softmax/LogSoftmax: logits of rank >= 1.
Status CheckLogits(const OpKernel& k, const TensorShape& logits);

// SparseSoftmaxCrossEntropyWithLogits: features [batch, classes], labels [batch] of int32 or
// int64. (The label values are checked by the CPU kernel; the GPU kernel gives NaN rows for
// labels outside [0, classes), as TF's GPU kernel does.)
Status CheckSparseXent(const OpKernel& k, const Tensor& features, const Tensor& labels,
                       int64_t* batch, int64_t* classes);

// SoftmaxCrossEntropyWithLogits: features and labels of rank <= 2 broadcast (NumPy rules) to
// [batch, classes]; each operand's [batch, classes] view: element (b, j) at
// b * row_stride + j * col_stride.
struct XentView {
  int64_t row_stride = 0, col_stride = 0;
};
struct XentShape {
  int64_t batch = 0, classes = 0;
  XentView features, labels;
  TensorShape backprop_shape;  // [batch, classes]
};
Status CheckXent(const OpKernel& k, const TensorShape& features, const TensorShape& labels,
                 XentShape* out);

}  // namespace tensorflux::nn_kernels
