// CPU kernel of AddN: sum = inputs[0] + ... + inputs[N-1], N same-shape inputs (what the
// autodiff driver uses to sum gradients at fan-out). The output takes the buffer of an input no
// one else holds; the sum runs in cache-sized blocks (every input read once, the output written
// once) over the intra-op pool. Integers wrap (computed in the unsigned type, as Add);
// half/bfloat16 accumulate in float and round once.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tensorflux/kernels/cpu/cwise_functors.h"
#include "tensorflux/kernels/cpu/cwise_ops_common.h"

namespace tensorflux {
namespace cwise {
namespace {

// Elements per block: the output block stays in L1/L2 while the inputs stream through.
constexpr int64_t kAddNBlock = 4096;

template <typename T>
class AddNOp : public OpKernel {
 public:
  explicit AddNOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    OP_REQUIRES(ctx, n >= 1, errors::InvalidArgument("AddN needs at least one input"));
    const TensorShape shape = ctx->input(0).shape();
    for (int i = 1; i < n; ++i) {
      OP_REQUIRES_OK(ctx, CheckSameShape(*this, shape, i, ctx->input(i).shape()));
    }
    if (n == 1) {
      ctx->set_output(0, ctx->input(0));
      return;
    }
    std::vector<const T*> in(n);
    for (int i = 0; i < n; ++i) in[i] = ctx->input(i).data<T>();
    // Forward the first input no one else holds (forward_input_or_allocate_output checks it).
    int first = 0;
    for (int i = 0; i < n; ++i) {
      if (ctx->input(i).RefCountIsOne()) {
        first = i;
        break;
      }
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({first}, 0, shape, &out));
    const int64_t total = shape.num_elements();
    if (total == 0) return;
    // Summation order: `first`, then the others in input order.
    std::vector<const T*> order = {in[first]};
    for (int i = 0; i < n; ++i) {
      if (i != first) order.push_back(in[i]);
    }
    T* zp = out->data<T>();
    ParallelShards(ctx, total, n, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; b += kAddNBlock) {
        SumBlock(order, zp, b, std::min(kAddNBlock, end - b));
      }
    });
  }

 private:
  // z[off, off + m) = sum of srcs[k][off, off + m); z may alias srcs[0] (same offsets).
  static void SumBlock(const std::vector<const T*>& srcs, T* z, int64_t off, int64_t m) {
    if constexpr (kIsHalfLike<T>) {
      float acc[kConvertBlock], tmp[kConvertBlock];
      for (int64_t o = off; o < off + m; o += kConvertBlock) {
        const int64_t k = std::min(kConvertBlock, off + m - o);
        ToFloat(srcs[0] + o, acc, k);
        for (size_t s = 1; s < srcs.size(); ++s) {
          ToFloat(srcs[s] + o, tmp, k);
          ArrMap<float>(acc, k) += ConstArrMap<float>(tmp, k);
        }
        FromFloat(acc, z + o, k);
      }
    } else {
      using C = typename ComputeTypeOf<functor::Add, T>::type;
      auto src = [&](size_t s) {
        return ConstArrMap<C>(reinterpret_cast<const C*>(srcs[s]) + off, m);
      };
      ArrMap<C> zm(reinterpret_cast<C*>(z) + off, m);
      zm = src(0) + src(1);
      size_t s = 2;
      for (; s + 1 < srcs.size(); s += 2) zm += src(s) + src(s + 1);
      if (s < srcs.size()) zm += src(s);
    }
  }
};

template <typename... Ts>
void RegisterAddN(TypeList<Ts...>) {
  (KernelRegistry::Global()->Register(
       KernelDefBuilder("AddN").Device(DEVICE_CPU).TypeConstraint<Ts>("T"),
       [](OpKernelConstruction* c) -> OpKernel* { return new AddNOp<Ts>(c); }),
   ...);
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterAddN(FloatTypes{});
  RegisterAddN(IntTypes{});
  return true;
}();

}  // namespace
}  // namespace cwise
}  // namespace tensorflux
