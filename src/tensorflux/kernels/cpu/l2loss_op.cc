// CPU kernel of L2Loss (TensorFlow's op; see ops/nn_ops.cc): output = sum(t ** 2) / 2, a scalar,
// for any shape of t (0 for an empty t). Squares are summed in double, in fixed blocks (their
// size does not depend on the thread count) summed in parallel and then added in block order, so
// the result is bit-identical for any number of threads.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tensorflux/core/threadpool.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/cpu/nn_kernel_util.h"

namespace tensorflux {
namespace {

constexpr int64_t kBlock = 16384;

template <typename T>
double HalfSumOfSquares(const T* x, int64_t n, ThreadPool* pool) {
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> part(static_cast<size_t>(blocks), 0.0);
  auto run = [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      double s = 0;
      const int64_t end = std::min(n, (b + 1) * kBlock);
      for (int64_t i = b * kBlock; i < end; ++i) {
        const double v = static_cast<double>(nn_kernels::ToAcc(x[i]));
        s += v * v;
      }
      part[b] = s;
    }
  };
  if (pool == nullptr || blocks < 2) {
    run(0, blocks);
  } else {
    pool->ParallelFor(blocks, kBlock, run);
  }
  double total = 0;
  for (double p : part) total += p;
  return total / 2;
}

class L2LossOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({}), &out));
    OP_REQUIRES_OK(ctx, nn_kernels::VisitFloatType(*this, t.dtype(), [&](auto tag) {
                     using T = typename decltype(tag)::type;
                     const double v = HalfSumOfSquares<T>(t.data<T>(), t.NumElements(),
                                                          ctx->intra_op_thread_pool());
                     out->data<T>()[0] =
                         nn_kernels::FromAcc<T>(static_cast<nn_kernels::AccT<T>>(v));
                     return OkStatus();
                   }));
  }
};

REGISTER_KERNEL_BUILDER(Name("L2Loss").Device(DEVICE_CPU), L2LossOp);

}  // namespace
}  // namespace tensorflux
