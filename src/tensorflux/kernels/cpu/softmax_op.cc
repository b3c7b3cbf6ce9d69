// CPU kernels of Softmax and LogSoftmax (TensorFlow's ops; see ops/nn_ops.cc): over the last
// axis of logits (rank >= 1), numerically stable (the row's max is subtracted before exp, so
// logits of 1e4 neither overflow nor lose the small terms), rows sharded over the intra-op pool.
// Arithmetic is in float for half/bfloat16/float and in double for double.
#include <algorithm>
#include <cmath>
#include <cstdint>
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

template <bool kLog, typename T>
void SoftmaxRows(const T* x, T* y, int64_t rows, int64_t n, ThreadPool* pool) {
  auto run = [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = x + r * n;
      T* yr = y + r * n;
      if constexpr (kLog || !std::is_same_v<T, AccT<T>>) {
        const auto st = nn_kernels::SoftmaxRowStats(xr, n);
        for (int64_t j = 0; j < n; ++j) {
          const AccT<T> shifted = ToAcc(xr[j]) - st.max;
          yr[j] = FromAcc<T>(kLog ? shifted - st.log_sum : std::exp(shifted) / st.sum);
        }
      } else {
        // float/double softmax: one exp per element, kept in y, then scaled (in place is safe:
        // x[j] is read before y[j] is written).
        T m = xr[0];
        for (int64_t j = 1; j < n; ++j) m = std::max(m, xr[j]);
        T sum = 0;
        for (int64_t j = 0; j < n; ++j) {
          const T e = std::exp(xr[j] - m);
          yr[j] = e;
          sum += e;
        }
        const T inv = T(1) / sum;
        for (int64_t j = 0; j < n; ++j) yr[j] *= inv;
      }
    }
  };
  if (pool == nullptr) {
    run(0, rows);
  } else {
    pool->ParallelFor(rows, 10 * n, run);  // about 10 ns per element
  }
}

template <bool kLog>
class SoftmaxOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    OP_REQUIRES_OK(ctx, nn_kernels::CheckLogits(*this, logits.shape()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, logits.shape(), &out));
    const int64_t n = logits.dim_size(logits.dims() - 1);
    if (logits.NumElements() == 0) return;
    const int64_t rows = logits.NumElements() / n;
    OP_REQUIRES_OK(ctx, nn_kernels::VisitFloatType(*this, logits.dtype(), [&](auto tag) {
                     using T = typename decltype(tag)::type;
                     SoftmaxRows<kLog, T>(logits.data<T>(), out->data<T>(), rows, n,
                                          ctx->intra_op_thread_pool());
                     return OkStatus();
                   }));
  }
};

REGISTER_KERNEL_BUILDER(Name("Softmax").Device(DEVICE_CPU), SoftmaxOp<false>);
REGISTER_KERNEL_BUILDER(Name("LogSoftmax").Device(DEVICE_CPU), SoftmaxOp<true>);

}  // namespace
}  // namespace tensorflux
