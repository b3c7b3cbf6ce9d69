// CPU kernels of SparseSoftmaxCrossEntropyWithLogits and SoftmaxCrossEntropyWithLogits
// (TensorFlow's ops; see ops/nn_ops.cc). For one row of logits x (C classes) with m = max(x) and
// lse = m + log(sum(exp(x - m))), the log-sum-exp with the max subtracted (stable for logits of
// 1e4):
//   sparse: loss = lse - x[label],             backprop_j = softmax_j - (j == label)
//   dense:  loss = sum_j labels_j (lse - x_j), backprop_j = softmax_j - labels_j
// One templated row loop serves both (a LabelRow policy gives labels_j), rows sharded over the
// intra-op pool. Arithmetic in float for half/bfloat16/float, in double for double.
// Dense features and labels broadcast by NumPy rules to a rank-2 [B, C] (each of rank <= 2).
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "tensorflux/core/threadpool.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/cpu/nn_kernel_util.h"

namespace tensorflux {
namespace {

using nn_kernels::AccT;
using nn_kernels::FromAcc;
using nn_kernels::KernelError;
using nn_kernels::ToAcc;

// A [B, C] view of a broadcast operand: element (b, j) is at b * row_stride + j * col_stride.
using Strided = nn_kernels::XentView;

// Row b's loss and backprop. Labels(b, j) gives the target probability of class j in row b.
template <typename T, typename Labels>
void XentRows(const T* x, Strided xs, const Labels& labels, int64_t b0, int64_t b1,
              int64_t classes, T* loss, T* backprop) {
  using A = AccT<T>;
  for (int64_t b = b0; b < b1; ++b) {
    const T* xr = x + b * xs.row_stride;
    T* br = backprop + b * classes;
    // For float and double the row's exp(x_j - max) are kept in the backprop row, so each is
    // computed once (the same values: results are unchanged); half/bfloat16 compute them again.
    A* exps = nullptr;
    if constexpr (std::is_same_v<T, A>) exps = br;
    const auto st = nn_kernels::SoftmaxRowStats(xr, classes, xs.col_stride, exps);
    A l = 0;
    for (int64_t j = 0; j < classes; ++j) {
      const A shifted = ToAcc(xr[j * xs.col_stride]) - st.max;
      const A target = labels(b, j);
      if (target != A(0)) l += target * (st.log_sum - shifted);
      const A e = exps != nullptr ? exps[j] : std::exp(shifted);
      br[j] = FromAcc<T>(e / st.sum - target);
    }
    loss[b] = FromAcc<T>(l);
  }
}

template <typename T, typename Labels>
void RunXent(const T* x, Strided xs, const Labels& labels, int64_t batch, int64_t classes,
             T* loss, T* backprop, ThreadPool* pool) {
  auto run = [&](int64_t b0, int64_t b1) {
    XentRows<T>(x, xs, labels, b0, b1, classes, loss, backprop);
  };
  if (pool == nullptr) {
    run(0, batch);
  } else {
    // About 5 ns an element (one expf, one division; the row's max, log and label apart), so a
    // [128, 10] batch of logits stays on the calling thread.
    pool->ParallelFor(batch, 5 * classes, run);
  }
}

template <typename T, typename L>
struct SparseLabels {
  const L* labels;
  AccT<T> operator()(int64_t b, int64_t j) const {
    return static_cast<int64_t>(labels[b]) == j ? AccT<T>(1) : AccT<T>(0);
  }
};

template <typename T>
struct DenseLabels {
  const T* labels;
  Strided s;
  AccT<T> operator()(int64_t b, int64_t j) const {
    return ToAcc(labels[b * s.row_stride + j * s.col_stride]);
  }
};

class SparseXentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    int64_t batch = 0, classes = 0;
    OP_REQUIRES_OK(ctx, nn_kernels::CheckSparseXent(*this, features, labels, &batch, &classes));
    // Every label in [0, classes) (checked before any output is written).
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t v = labels.dtype() == DT_INT32 ? int64_t{labels.data<int32_t>()[b]}
                                                   : labels.data<int64_t>()[b];
      OP_REQUIRES(ctx, v >= 0 && v < classes,
                  KernelError(*this, "received a label value of ", v, " in row ", b,
                              " which is outside the valid range of [0, ", classes, ")"));
    }
    Tensor* loss = nullptr;
    Tensor* backprop = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch}), &loss));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, features.shape(), &backprop));
    if (batch == 0) return;  // with batch > 0 the check above needs classes > 0
    const Strided xs{classes, 1};
    OP_REQUIRES_OK(ctx, nn_kernels::VisitFloatType(*this, features.dtype(), [&](auto tag) {
                     using T = typename decltype(tag)::type;
                     auto go = [&](auto* label_data) {
                       using L = std::remove_const_t<std::remove_pointer_t<decltype(label_data)>>;
                       RunXent<T>(features.data<T>(), xs, SparseLabels<T, L>{label_data}, batch,
                                  classes, loss->data<T>(), backprop->data<T>(),
                                  ctx->intra_op_thread_pool());
                     };
                     if (labels.dtype() == DT_INT32) {
                       go(labels.data<int32_t>());
                     } else {
                       go(labels.data<int64_t>());
                     }
                     return OkStatus();
                   }));
  }
};

class XentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    nn_kernels::XentShape xs;
    OP_REQUIRES_OK(ctx, nn_kernels::CheckXent(*this, features.shape(), labels.shape(), &xs));
    const int64_t batch = xs.batch, classes = xs.classes;
    Tensor* loss = nullptr;
    Tensor* backprop = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch}), &loss));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, xs.backprop_shape, &backprop));
    if (batch == 0) return;
    OP_REQUIRES_OK(ctx, nn_kernels::VisitFloatType(*this, features.dtype(), [&](auto tag) {
                     using T = typename decltype(tag)::type;
                     T* l = loss->data<T>();
                     if (classes == 0) {  // an empty sum: zero loss
                       for (int64_t b = 0; b < batch; ++b) l[b] = T();
                       return OkStatus();
                     }
                     RunXent<T>(features.data<T>(), xs.features,
                                DenseLabels<T>{labels.data<T>(), xs.labels}, batch,
                                classes, l, backprop->data<T>(), ctx->intra_op_thread_pool());
                     return OkStatus();
                   }));
  }
};

REGISTER_KERNEL_BUILDER(Name("SparseSoftmaxCrossEntropyWithLogits").Device(DEVICE_CPU),
                        SparseXentOp);
REGISTER_KERNEL_BUILDER(Name("SoftmaxCrossEntropyWithLogits").Device(DEVICE_CPU), XentOp);

}  // namespace
}  // namespace tensorflux
