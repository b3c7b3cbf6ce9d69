// GPU kernels of FusedBatchNormV3 and FusedBatchNormGradV3 for T = U = float (NHWC and NCHW)
// through cuDNN's spatial batch normalization, with the CPU kernels' attrs, checks
// (kernels/shared/batch_norm_kernel.h) and outputs (kernels/cpu/batch_norm_ops.cc):
//
//   forward, training   y, batch_mean and batch_variance (the unbiased variance; both blended
//                       with the mean/variance inputs when exponential_avg_factor != 1),
//                       reserve_space_1 = the batch mean, reserve_space_2 = the biased batch
//                       variance (as on the CPU, so either device's gradient kernel can consume
//                       either device's forward outputs), reserve_space_3 a scalar 0
//   forward, inference  y from the given mean and variance, which the statistics outputs echo
//   gradient, training  cuDNN's backward pass with the saved mean and 1/sqrt(reserve_2 + eps)
//   gradient, inference dx = dy * scale / sqrt(var + eps), scale/offset gradients summed with
//                       the reductions (reduce.cu)
// An empty batch gives NaN statistics and zero scale/offset gradients, as on the CPU.
#include "tensorflux/kernels/cuda/bn_launch.h"
#include "tensorflux/kernels/cuda/cudnn_util.h"
#include "tensorflux/kernels/cuda/gpu_kernel_util.h"
#include "tensorflux/kernels/cuda/reduce_launch.h"
#include "tensorflux/kernels/shared/batch_norm_kernel.h"

namespace tensorflux {
namespace gpu {
namespace {

const float* F(const Tensor& t) { return static_cast<const float*>(t.raw_data()); }
float* F(Tensor* t) { return static_cast<float*>(t->raw_data()); }

// x's cuDNN descriptor and the derived [1, C, 1, 1] descriptor of the per-channel vectors.
Status Describe(const BnLayout& l, TensorDesc* x, TensorDesc* bn) {
  for (int64_t v : {l.n, l.c, l.h, l.w}) {
    if (v > INT32_MAX) return errors::Unimplemented("cuDNN takes 32-bit sizes, got ", v);
  }
  TX_RETURN_IF_ERROR(x->Init());
  TX_RETURN_IF_ERROR(bn->Init());
  TX_RETURN_IF_CUDA_ERROR(cudnnSetTensor4dDescriptor(
      x->get(), l.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
      static_cast<int>(l.n), static_cast<int>(l.c), static_cast<int>(l.h), static_cast<int>(l.w)));
  TX_RETURN_IF_CUDA_ERROR(cudnnDeriveBNTensorDescriptor(bn->get(), x->get(), CUDNN_BATCHNORM_SPATIAL));
  return OkStatus();
}

Status Memset(CudaContext* gc, Tensor* t, int byte) {
  if (t->TotalBytes() == 0) return OkStatus();
  return CudaStatus(cudaMemsetAsync(t->raw_data(), byte, t->TotalBytes(), gc->compute_stream()),
                    "cudaMemsetAsync");
}

Status Copy(CudaContext* gc, const Tensor& from, Tensor* to) {
  return gc->CopyDeviceToDevice(from.raw_data(), to->raw_data(), from.TotalBytes());
}

class GpuFusedBatchNormOp : public BatchNormBase {
 public:
  using BatchNormBase::BatchNormBase;

  void Compute(OpKernelContext* ctx) override {
    BnLayout l;
    OP_REQUIRES_OK(ctx, CheckForwardInputs(ctx, &l));
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    Tensor* stats[4];  // batch_mean, batch_variance, reserve_space_1, reserve_space_2
    for (int i = 0; i < 4; ++i) {
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i + 1, TensorShape({l.c}), &stats[i]));
    }
    Tensor* reserve3 = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(5, TensorShape({}), &reserve3));
    auto gc = GpuContextOf(ctx);
    OP_REQUIRES_OK(ctx, gc.status());
    OP_REQUIRES_OK(ctx, Memset(*gc, reserve3, 0));
    if (l.c == 0) return;
    if (l.count() == 0) {  // TF: NaN statistics for an empty batch (all-ones bits are a NaN)
      for (Tensor* t : stats) OP_REQUIRES_OK(ctx, Memset(*gc, t, 0xff));
      return;
    }
    OP_REQUIRES_OK(ctx, is_training_ ? Training(ctx, *gc, l, y, stats) : Inference(ctx, *gc, l, y, stats));
  }

 private:
  Status Training(OpKernelContext* ctx, CudaContext* gc, const BnLayout& l, Tensor* y,
                  Tensor* const* stats) {
    TensorDesc xd, bnd;
    TX_RETURN_IF_ERROR(Describe(l, &xd, &bnd));
    // cuDNN's running statistics with factor 1 are the batch mean and unbiased variance; they
    // start zeroed (cuDNN computes running * (1 - factor) + new, and 0 * NaN would be NaN).
    Tensor mean, unbiased, inv;
    for (Tensor* t : {&mean, &unbiased, &inv}) {
      TX_RETURN_IF_ERROR(ctx->allocate_temp(DT_FLOAT, TensorShape({l.c}), t));
    }
    TX_RETURN_IF_ERROR(Memset(gc, &mean, 0));
    TX_RETURN_IF_ERROR(Memset(gc, &unbiased, 0));
    const float one = 1, zero = 0;
    {
      absl::MutexLock lib(gc->library_mu());
      TX_RETURN_IF_CUDA_ERROR(cudnnBatchNormalizationForwardTraining(
          gc->dnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, xd.get(), ctx->input(0).raw_data(),
          xd.get(), y->raw_data(), bnd.get(), ctx->input(1).raw_data(), ctx->input(2).raw_data(),
          1.0, mean.raw_data(), unbiased.raw_data(), static_cast<double>(epsilon_),
          stats[2]->raw_data(), inv.raw_data()));
    }
    const bool blend = factor_ != 1.0f;
    return LaunchStatus(*this, LaunchBnStatistics(
                                   l.c, l.count(), factor_, F(mean), F(unbiased),
                                   blend ? F(ctx->input(3)) : nullptr,
                                   blend ? F(ctx->input(4)) : nullptr, F(stats[0]), F(stats[1]),
                                   F(stats[3]), gc->compute_stream()));
  }

  Status Inference(OpKernelContext* ctx, CudaContext* gc, const BnLayout& l, Tensor* y,
                   Tensor* const* stats) {
    TensorDesc xd, bnd;
    TX_RETURN_IF_ERROR(Describe(l, &xd, &bnd));
    const float one = 1, zero = 0;
    {
      absl::MutexLock lib(gc->library_mu());
      TX_RETURN_IF_CUDA_ERROR(cudnnBatchNormalizationForwardInference(
          gc->dnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, xd.get(), ctx->input(0).raw_data(),
          xd.get(), y->raw_data(), bnd.get(), ctx->input(1).raw_data(), ctx->input(2).raw_data(),
          ctx->input(3).raw_data(), ctx->input(4).raw_data(), static_cast<double>(epsilon_)));
    }
    // The statistics outputs echo the given mean (outputs 1, 3) and variance (2, 4).
    for (int i = 0; i < 4; ++i) TX_RETURN_IF_ERROR(Copy(gc, ctx->input(i % 2 == 0 ? 3 : 4), stats[i]));
    return OkStatus();
  }
};

class GpuFusedBatchNormGradOp : public BatchNormBase {
 public:
  using BatchNormBase::BatchNormBase;

  void Compute(OpKernelContext* ctx) override {
    BnLayout l;
    OP_REQUIRES_OK(ctx, CheckGradInputs(ctx, &l));
    const Tensor& x = ctx->input(1);
    Tensor *dx = nullptr, *dscale = nullptr, *doffset = nullptr, *r4 = nullptr, *r5 = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &dx));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({l.c}), &dscale));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape({l.c}), &doffset));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(3, TensorShape({0}), &r4));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(4, TensorShape({0}), &r5));
    if (l.c == 0) return;
    auto gc = GpuContextOf(ctx);
    OP_REQUIRES_OK(ctx, gc.status());
    if (l.count() == 0) {
      OP_REQUIRES_OK(ctx, Memset(*gc, dscale, 0));
      OP_REQUIRES_OK(ctx, Memset(*gc, doffset, 0));
      return;
    }
    Tensor inv;
    OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, TensorShape({l.c}), &inv));
    OP_REQUIRES_OK(ctx, LaunchStatus(*this, LaunchBnInvStd(l.c, F(ctx->input(4)), epsilon_, F(&inv),
                                                           (*gc)->compute_stream())));
    if (is_training_) {
      TensorDesc xd, bnd;
      OP_REQUIRES_OK(ctx, Describe(l, &xd, &bnd));
      const float one = 1, zero = 0;
      absl::MutexLock lib((*gc)->library_mu());
      OP_REQUIRES_OK(ctx, CudaStatus(cudnnBatchNormalizationBackward(
                                         (*gc)->dnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one,
                                         &zero, xd.get(), x.raw_data(), xd.get(),
                                         ctx->input(0).raw_data(), xd.get(), dx->raw_data(),
                                         bnd.get(), ctx->input(2).raw_data(), dscale->raw_data(),
                                         doffset->raw_data(), static_cast<double>(epsilon_),
                                         ctx->input(3).raw_data(), inv.raw_data()),
                                     "cudnnBatchNormalizationBackward"));
      return;
    }
    Tensor prod;
    OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, x.shape(), &prod));
    OP_REQUIRES_OK(ctx, LaunchStatus(*this, LaunchBnInferenceGrad(
                                                l.size(), l.c, l.inner(), F(ctx->input(0)), F(x),
                                                F(ctx->input(2)), F(ctx->input(3)), F(inv), F(dx),
                                                F(&prod), (*gc)->compute_stream())));
    // Per-channel sums over [outer, C, inner].
    const std::vector<int64_t> groups = {l.outer(), l.c, l.inner()};
    const std::vector<bool> reduced = {true, false, true};
    OP_REQUIRES_OK(ctx, RunReduction(ctx, *this, ReduceKind::kSum, ElemType::kFloat, prod, groups,
                                     reduced, dscale));
    OP_REQUIRES_OK(ctx, RunReduction(ctx, *this, ReduceKind::kSum, ElemType::kFloat,
                                     ctx->input(0), groups, reduced, doffset));
  }
};

[[maybe_unused]] const bool kRegistered = [] {
  auto reg = [](const char* op, KernelFactory f) {
    KernelRegistry::Global()->Register(KernelDefBuilder(op)
                                           .Device(DEVICE_GPU)
                                           .TypeConstraint("T", DT_FLOAT)
                                           .TypeConstraint("U", DT_FLOAT),
                                       std::move(f));
  };
  reg("FusedBatchNormV3", [](OpKernelConstruction* c) { return new GpuFusedBatchNormOp(c); });
  reg("FusedBatchNormGradV3",
      [](OpKernelConstruction* c) { return new GpuFusedBatchNormGradOp(c); });
  return true;
}();

}  // namespace
}  // namespace gpu
}  // namespace tensorflux
