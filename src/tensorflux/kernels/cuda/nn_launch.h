// Launchers of the NN-family GPU kernels (nn.cu), used by nn_ops.cc. Semantics are the CPU
// kernels' (kernels/cpu/bias_add_op.cc, softmax_op.cc, xent_ops.cc): softmax over the last axis
// with the row max subtracted before exp (stable for logits of 1e4); for a row x with
// m = max(x), s = sum(exp(x - m)):
//   softmax_j = exp(x_j - m) / s,  log_softmax_j = x_j - m - log(s)
//   dense xent:  loss = sum_j labels_j (m + log(s) - x_j), backprop_j = softmax_j - labels_j
//   sparse xent: loss = m + log(s) - x_label,             backprop_j = softmax_j - (j == label)
// A sparse label outside [0, classes) gives NaN loss and backprop for its row (TF's GPU
// behaviour; the CPU kernel reports an error instead). float computes in float, double in
// double. Rows of up to 1024 elements go one warp per row, longer ones one block per row.
#pragma once

#include <cstdint>

#include "tensorflux/kernels/cuda/launch_common.h"

namespace tensorflux {
namespace gpu {

// y[i] = x[i] + bias[(i / inner) % channels] for i < n; y may be x.
cudaError_t LaunchBiasAdd(ElemType t, const void* x, const void* bias, void* y, int64_t n,
                          int64_t channels, int64_t inner, cudaStream_t stream);

// Softmax (log: LogSoftmax) of `rows` contiguous rows of n > 0 elements; y may be x.
cudaError_t LaunchSoftmax(ElemType t, bool log, const void* x, void* y, int64_t rows, int64_t n,
                          cudaStream_t stream);

// Dense cross-entropy over [batch, classes] (classes > 0); the operands' [batch, classes]
// views: element (b, j) of features at b * f_row + j * f_col, of labels likewise.
struct XentArgs {
  int64_t batch = 0, classes = 0;
  int64_t f_row = 0, f_col = 0, l_row = 0, l_col = 0;
};
cudaError_t LaunchXent(ElemType t, const void* features, const void* labels, const XentArgs& a,
                       void* loss, void* backprop, cudaStream_t stream);

// Sparse cross-entropy: features [batch, classes] contiguous (classes > 0), labels [batch] of
// int32 (labels64 false) or int64, in GPU memory.
cudaError_t LaunchSparseXent(ElemType t, bool labels64, const void* features, const void* labels,
                             int64_t batch, int64_t classes, void* loss, void* backprop,
                             cudaStream_t stream);

}  // namespace gpu
}  // namespace tensorflux
