// The fused kernels' bias + activation pass (fused_epilogue.h).
#include "tensorflux/kernels/cpu/fused_epilogue.h"

#include <algorithm>

#include "tensorflux/kernels/cpu/bias_add_util.h"
#include "tensorflux/kernels/cpu/cwise_functors_nn.h"
#include "tensorflux/kernels/cpu/cwise_ops_common.h"
#include "tensorflux/kernels/cpu/nn_kernel_util.h"

namespace tensorflux::fused {
namespace {

// Elements per block: the bias is added to a block and the activation run over it while it is
// in L1/L2.
constexpr int64_t kBlockElements = 8192;

template <typename T, typename F>
void Activate(const F& f, T* p, int64_t n) {
  cwise::UnaryRun<F, T, T>(f, p, p, n);
}

template <typename T>
void ActivateBlock(const FusedOpsSpec& spec, T* p, int64_t n) {
  namespace fn = cwise::functor;
  switch (spec.activation) {
    case FusedActivation::kNone:
      return;
    case FusedActivation::kRelu:
      return Activate(fn::Relu{}, p, n);
    case FusedActivation::kRelu6:
      return Activate(fn::Relu6{}, p, n);
    case FusedActivation::kElu:
      return Activate(fn::Elu{}, p, n);
    case FusedActivation::kLeakyRelu: {
      fn::LeakyRelu f;
      f.alpha = spec.leakyrelu_alpha;
      return Activate(f, p, n);
    }
  }
}

}  // namespace

Status Epilogue::Init(OpKernelConstruction* ctx) {
  TX_ASSIGN_OR_RETURN(spec_, FusedOpsSpec::FromNodeDef(ctx->def()));
  return nn_kernels::ReadDataFormat(ctx, &nchw_);
}

Status Epilogue::CheckBias(const OpKernel& kernel, const Tensor& bias, const Tensor& out) const {
  nn_kernels::BiasLayout l;
  return nn_kernels::CheckBiasAdd(kernel, out, bias, nchw_, &l);
}

template <typename T>
Status Epilogue::Apply(const OpKernel& kernel, OpKernelContext* ctx, const Tensor& bias,
                       Tensor* out) const {
  nn_kernels::BiasLayout l;
  TX_RETURN_IF_ERROR(nn_kernels::CheckBiasAdd(kernel, *out, bias, nchw_, &l));
  if (out->NumElements() == 0) return OkStatus();
  const int64_t row = l.channels * l.inner;
  const int64_t rows_per_block = std::max<int64_t>(1, kBlockElements / std::max<int64_t>(row, 1));
  const int64_t blocks = (l.outer + rows_per_block - 1) / rows_per_block;
  T* y = out->data<T>();
  const T* b = bias.data<T>();
  auto run = [&](int64_t b0, int64_t b1) {
    for (int64_t k = b0; k < b1; ++k) {
      const int64_t o0 = k * rows_per_block, o1 = std::min(l.outer, o0 + rows_per_block);
      nn_kernels::AddBiasRows(y, b, y, l, o0, o1);
      ActivateBlock(spec_, y + o0 * row, (o1 - o0) * row);
    }
  };
  ThreadPool* pool = ctx->intra_op_thread_pool();
  if (pool == nullptr || blocks < 2) {
    run(0, blocks);
  } else {
    pool->ParallelFor(blocks, rows_per_block * row, run);
  }
  return OkStatus();
}

template Status Epilogue::Apply<float>(const OpKernel&, OpKernelContext*, const Tensor&,
                                       Tensor*) const;
template Status Epilogue::Apply<double>(const OpKernel&, OpKernelContext*, const Tensor&,
                                        Tensor*) const;
template Status Epilogue::Apply<Half>(const OpKernel&, OpKernelContext*, const Tensor&,
                                      Tensor*) const;
template Status Epilogue::Apply<BFloat16>(const OpKernel&, OpKernelContext*, const Tensor&,
                                          Tensor*) const;

}  // namespace tensorflux::fused
