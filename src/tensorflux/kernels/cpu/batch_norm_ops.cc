// CPU kernels of FusedBatchNormV3 and FusedBatchNormGradV3 (semantics: ops/batch_norm_ops.cc).
//
// T = float with U = float: oneDNN's batch_normalization primitives (use_scale | use_shift;
//   use_global_stats in inference), NHWC or NCHW memory. oneDNN returns the biased batch
//   variance, which is TF's reserve_space_2; the unbiased and blended outputs are computed here
//   on the C-element vectors.
// double, half and bfloat16 x (and float without oneDNN): one direct-loop template, accumulating
//   in double: a two-pass (mean, then centered squares) per-channel reduction over fixed blocks
//   of the batch (so results do not depend on the thread count), blocks spread over the intra-op
//   pool, then one elementwise pass. oneDNN has no float64, and the gradient checker needs it.
// Validation (INVALID_ARGUMENT): x rank 4; data_format NHWC or NCHW; scale, offset (and mean,
// variance in inference or when exponential_avg_factor != 1; reserve_space_1/2 in the gradient)
// vectors of C elements; y_backprop of x's shape; epsilon >= 0 (TF does not check; a negative
// one only makes NaNs). T/U pairs other than the registered ones get NOT_FOUND (no kernel).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/cpu/dnnl_util.h"
#include "tensorflux/kernels/shared/batch_norm_kernel.h"

namespace tensorflux {
namespace {

template <typename T>
inline double ToAcc(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<double>(v);
  }
}
template <typename T>
inline T FromAcc(double v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

// Fixed split of the outer dimension into blocks, independent of the pool size.
constexpr int64_t kBlocks = 32;

// acc[c * K + k] = sum over channel c's elements of f(c, flat index, k-th value): f(c, i, v)
// adds its K terms into v[0..K). Deterministic: block partials are added in block order.
template <int K, typename F>
std::vector<double> ChannelSums(OpKernelContext* ctx, const BnLayout& l, const F& f) {
  const int64_t outer = l.outer(), C = l.c, inner = l.inner();
  const int64_t blocks = std::max<int64_t>(1, std::min(outer, kBlocks));
  std::vector<double> partial(static_cast<size_t>(blocks * C * K), 0.0);
  auto run = [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      double* acc = partial.data() + b * C * K;
      for (int64_t o = outer * b / blocks; o < outer * (b + 1) / blocks; ++o)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t i = 0; i < inner; ++i) f(c, (o * C + c) * inner + i, acc + c * K);
    }
  };
  ThreadPool* pool = ctx->intra_op_thread_pool();
  if (pool == nullptr) {
    run(0, blocks);
  } else {
    pool->ParallelFor(blocks, l.size() / blocks * K * 4, run);
  }
  std::vector<double> sums(static_cast<size_t>(C * K), 0.0);
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t j = 0; j < C * K; ++j) sums[j] += partial[b * C * K + j];
  return sums;
}

// f(c, flat index) for every element, split over the pool.
template <typename F>
void ForEachElement(OpKernelContext* ctx, const BnLayout& l, const F& f) {
  const int64_t C = l.c, inner = l.inner();
  auto run = [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < inner; ++i) f(c, (o * C + c) * inner + i);
  };
  ThreadPool* pool = ctx->intra_op_thread_pool();
  if (pool == nullptr) {
    run(0, l.outer());
  } else {
    pool->ParallelFor(l.outer(), C * inner * 4, run);
  }
}

template <typename T>
struct BnLoops {
  // Batch mean and biased variance of x.
  static void Moments(OpKernelContext* ctx, const BnLayout& l, const T* x,
                      std::vector<double>* mean, std::vector<double>* var) {
    const double n = static_cast<double>(l.count());
    *mean = ChannelSums<1>(ctx, l, [&](int64_t, int64_t i, double* a) { a[0] += ToAcc(x[i]); });
    for (double& m : *mean) m /= n;
    const double* mp = mean->data();
    *var = ChannelSums<1>(ctx, l, [&](int64_t c, int64_t i, double* a) {
      const double d = ToAcc(x[i]) - mp[c];
      a[0] += d * d;
    });
    for (double& v : *var) v /= n;
  }

  // y = x * a[c] + b[c].
  static void Affine(OpKernelContext* ctx, const BnLayout& l, const T* x,
                     const std::vector<double>& a, const std::vector<double>& b, T* y) {
    ForEachElement(ctx, l, [&](int64_t c, int64_t i) { y[i] = FromAcc<T>(ToAcc(x[i]) * a[c] + b[c]); });
  }

  // offset_backprop = sum(dy), scale_backprop = sum(dy * xhat) with xhat = (x - mean) * inv;
  // dx = scale * inv * (dy - [training] (sum(dy) + xhat * sum(dy * xhat)) / n).
  static void Backward(OpKernelContext* ctx, const BnLayout& l, bool training, const T* dy,
                       const T* x, const std::vector<double>& scale,
                       const std::vector<double>& mean, const std::vector<double>& inv, T* dx,
                       std::vector<double>* dscale, std::vector<double>* doffset) {
    const std::vector<double> sums = ChannelSums<2>(ctx, l, [&](int64_t c, int64_t i, double* a) {
      const double g = ToAcc(dy[i]);
      a[0] += g;
      a[1] += g * (ToAcc(x[i]) - mean[c]) * inv[c];
    });
    const int64_t C = l.c;
    const double n = static_cast<double>(l.count());
    std::vector<double> k(C), mean_dy(C, 0.0), mean_dy_xhat(C, 0.0);
    dscale->resize(C);
    doffset->resize(C);
    for (int64_t c = 0; c < C; ++c) {
      (*doffset)[c] = sums[c * 2];
      (*dscale)[c] = sums[c * 2 + 1];
      k[c] = scale[c] * inv[c];
      if (training) {
        mean_dy[c] = sums[c * 2] / n;
        mean_dy_xhat[c] = sums[c * 2 + 1] / n;
      }
    }
    ForEachElement(ctx, l, [&](int64_t c, int64_t i) {
      const double xhat = (ToAcc(x[i]) - mean[c]) * inv[c];
      dx[i] = FromAcc<T>(k[c] * (ToAcc(dy[i]) - mean_dy[c] - xhat * mean_dy_xhat[c]));
    });
  }
};

#ifdef TX_HAVE_DNNL
dnnl::memory::desc DnnlData(const BnLayout& l) {
  return dnnl::memory::desc({l.n, l.c, l.h, l.w}, dnnl::memory::data_type::f32,
                            l.nhwc ? dnnl::memory::format_tag::nhwc : dnnl::memory::format_tag::nchw);
}
dnnl::memory::desc DnnlVec(const BnLayout& l) {
  return dnnl::memory::desc({l.c}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
}
dnnl::normalization_flags Flags(bool training) {
  auto f = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
  return training ? f : f | dnnl::normalization_flags::use_global_stats;
}

// Training: writes the batch mean and biased variance into mean/var. Inference: reads them.
Status DnnlForward(OpKernelContext* ctx, const BnLayout& l, bool training, float eps, const float* x,
                   const float* scale, const float* offset, float* mean, float* var, float* y) {
  Status alloc;
  Tensor buf;  // the scratchpad, alive until Run has waited for the stream
  Status run = dnnl_util::Run(ctx, "batch norm forward", [&](dnnl::stream& s) {
    const auto flags = Flags(training);
    const auto prop = training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
    dnnl::batch_normalization_forward::primitive_desc pd(
        dnnl::batch_normalization_forward::desc(prop, DnnlData(l), eps, flags),
        dnnl_util::UserScratchpadAttr(), dnnl_util::CpuEngine());
    dnnl::memory scratchpad;
    alloc = dnnl_util::Scratchpad(ctx, pd.scratchpad_desc(), &buf, &scratchpad);
    if (!alloc.ok()) return;
    dnnl::batch_normalization_forward(pd).execute(
        s, {{DNNL_ARG_SRC, dnnl_util::Wrap(DnnlData(l), x)},
            {DNNL_ARG_DST, dnnl_util::Wrap(DnnlData(l), y)},
            {DNNL_ARG_SCALE, dnnl_util::Wrap(DnnlVec(l), scale)},
            {DNNL_ARG_SHIFT, dnnl_util::Wrap(DnnlVec(l), offset)},
            {DNNL_ARG_MEAN, dnnl_util::Wrap(DnnlVec(l), mean)},
            {DNNL_ARG_VARIANCE, dnnl_util::Wrap(DnnlVec(l), var)},
            {DNNL_ARG_SCRATCHPAD, scratchpad}});
  });
  TX_RETURN_IF_ERROR(alloc);
  return run;
}

Status DnnlBackward(OpKernelContext* ctx, const BnLayout& l, bool training, float eps, const float* dy, const float* x,
                    const float* scale, const float* mean, const float* var, float* dx,
                    float* dscale, float* doffset) {
  // oneDNN 2.6's backward pass with use_shift wants the shift as an input too, though the
  // gradients do not depend on it: zeros.
  std::vector<float> shift(static_cast<size_t>(l.c), 0.0f);
  Status alloc;
  Tensor buf;  // the scratchpad, alive until Run has waited for the stream
  Status run = dnnl_util::Run(ctx, "batch norm backward", [&](dnnl::stream& s) {
    const auto flags = Flags(training);
    const auto& engine = dnnl_util::CpuEngine();
    const dnnl::primitive_attr attr = dnnl_util::UserScratchpadAttr();
    dnnl::batch_normalization_forward::primitive_desc fwd_pd(
        dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_training, DnnlData(l), eps,
                                                flags),
        attr, engine);
    dnnl::batch_normalization_backward::primitive_desc pd(
        dnnl::batch_normalization_backward::desc(dnnl::prop_kind::backward, DnnlData(l),
                                                 DnnlData(l), eps, flags),
        attr, engine, fwd_pd);
    dnnl::memory scratchpad;
    alloc = dnnl_util::Scratchpad(ctx, pd.scratchpad_desc(), &buf, &scratchpad);
    if (!alloc.ok()) return;
    dnnl::batch_normalization_backward(pd).execute(
        s, {{DNNL_ARG_SRC, dnnl_util::Wrap(DnnlData(l), x)},
            {DNNL_ARG_DIFF_DST, dnnl_util::Wrap(DnnlData(l), dy)},
            {DNNL_ARG_MEAN, dnnl_util::Wrap(DnnlVec(l), mean)},
            {DNNL_ARG_VARIANCE, dnnl_util::Wrap(DnnlVec(l), var)},
            {DNNL_ARG_SCALE, dnnl_util::Wrap(DnnlVec(l), scale)},
            {DNNL_ARG_SHIFT, dnnl_util::Wrap(DnnlVec(l), shift.data())},
            {DNNL_ARG_DIFF_SRC, dnnl_util::Wrap(DnnlData(l), dx)},
            {DNNL_ARG_DIFF_SCALE, dnnl_util::Wrap(DnnlVec(l), dscale)},
            {DNNL_ARG_DIFF_SHIFT, dnnl_util::Wrap(DnnlVec(l), doffset)},
            {DNNL_ARG_SCRATCHPAD, scratchpad}});
  });
  TX_RETURN_IF_ERROR(alloc);
  return run;
}
#endif  // TX_HAVE_DNNL

template <typename T, typename U>
constexpr bool kUseDnnl =
#ifdef TX_HAVE_DNNL
    std::is_same_v<T, float> && std::is_same_v<U, float>;
#else
    false;
#endif

// The inputs as doubles (scale, offset, statistics: C-element vectors).
template <typename U>
std::vector<double> Doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.NumElements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(t.data<U>()[i]);
  return v;
}

template <typename T, typename U>
class FusedBatchNormOp : public BatchNormBase {
 public:
  using BatchNormBase::BatchNormBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    BnLayout l;
    OP_REQUIRES_OK(ctx, CheckForwardInputs(ctx, &l));
    const int64_t C = l.c;
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
    Tensor* stats[4];
    for (int i = 0; i < 4; ++i) {
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i + 1, TensorShape({C}), &stats[i]));
    }
    Tensor* reserve3 = nullptr;  // TF's CPU: a scalar zero
    OP_REQUIRES_OK(ctx, ctx->allocate_output(5, TensorShape({}), &reserve3));
    reserve3->data<U>()[0] = U(0);
    if (C == 0) return;
    if (l.count() == 0) {  // TF: NaN batch statistics, zero reserve spaces for an empty batch
      for (int i = 0; i < 4; ++i) {
        std::fill_n(stats[i]->data<U>(), C, i < 2 ? std::numeric_limits<U>::quiet_NaN() : U(0));
      }
      return;
    }
    const std::vector<double> scale = Doubles<U>(ctx->input(1)), offset = Doubles<U>(ctx->input(2));
    std::vector<double> mean, var;  // what normalizes y: batch (biased) or given statistics
    if (!is_training_) {
      mean = Doubles<U>(ctx->input(3));
      var = Doubles<U>(ctx->input(4));
    }
    if constexpr (kUseDnnl<T, U>) {
#ifdef TX_HAVE_DNNL
      std::vector<float> fm(C), fv(C);
      if (!is_training_) {
        for (int64_t c = 0; c < C; ++c) fm[c] = static_cast<float>(mean[c]), fv[c] = static_cast<float>(var[c]);
      }
      // x may share y's buffer (forwarding): oneDNN's batch norm supports in-place.
      OP_REQUIRES_OK(ctx, DnnlForward(ctx, l, is_training_, epsilon_, x.data<float>(),
                                      ctx->input(1).data<float>(), ctx->input(2).data<float>(),
                                      fm.data(), fv.data(), y->data<float>()));
      mean.assign(fm.begin(), fm.end());
      var.assign(fv.begin(), fv.end());
#endif
    } else {
      if (is_training_) BnLoops<T>::Moments(ctx, l, x.data<T>(), &mean, &var);
      std::vector<double> a(C), b(C);
      for (int64_t c = 0; c < C; ++c) {
        a[c] = scale[c] / std::sqrt(var[c] + static_cast<double>(epsilon_));
        b[c] = offset[c] - mean[c] * a[c];
      }
      BnLoops<T>::Affine(ctx, l, x.data<T>(), a, b, y->data<T>());
    }
    WriteStatistics(ctx, l, mean, var, stats);
  }

 private:
  void WriteStatistics(OpKernelContext* ctx, const BnLayout& l, const std::vector<double>& mean,
                       const std::vector<double>& var, Tensor* const* stats) const {
    const int64_t C = l.c;
    U* batch_mean = stats[0]->data<U>();
    U* batch_var = stats[1]->data<U>();
    U* saved_mean = stats[2]->data<U>();
    U* saved_var = stats[3]->data<U>();
    if (!is_training_) {  // TF's CPU: the given statistics, zero reserve spaces
      for (int64_t c = 0; c < C; ++c) {
        batch_mean[c] = static_cast<U>(mean[c]);
        batch_var[c] = static_cast<U>(var[c]);
        saved_mean[c] = saved_var[c] = U(0);
      }
      return;
    }
    const double n = static_cast<double>(l.count());
    const double bessel = n > 1 ? n / (n - 1) : 1.0;
    const double f = factor_;
    const U* old_mean = f != 1.0 ? ctx->input(3).data<U>() : nullptr;
    const U* old_var = f != 1.0 ? ctx->input(4).data<U>() : nullptr;
    for (int64_t c = 0; c < C; ++c) {
      saved_mean[c] = static_cast<U>(mean[c]);
      saved_var[c] = static_cast<U>(var[c]);
      double m = mean[c], v = var[c] * bessel;
      if (f != 1.0) {
        m = (1 - f) * static_cast<double>(old_mean[c]) + f * m;
        v = (1 - f) * static_cast<double>(old_var[c]) + f * v;
      }
      batch_mean[c] = static_cast<U>(m);
      batch_var[c] = static_cast<U>(v);
    }
  }
};

template <typename T, typename U>
class FusedBatchNormGradOp : public BatchNormBase {
 public:
  using BatchNormBase::BatchNormBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& dy = ctx->input(0);
    const Tensor& x = ctx->input(1);
    BnLayout l;
    OP_REQUIRES_OK(ctx, CheckGradInputs(ctx, &l));
    const int64_t C = l.c;
    Tensor *dx = nullptr, *dscale = nullptr, *doffset = nullptr, *r4 = nullptr, *r5 = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &dx));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({C}), &dscale));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape({C}), &doffset));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(3, TensorShape({0}), &r4));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(4, TensorShape({0}), &r5));
    if (C == 0) return;
    if (l.count() == 0) {
      std::fill_n(dscale->data<U>(), C, U(0));
      std::fill_n(doffset->data<U>(), C, U(0));
      return;
    }
    if constexpr (kUseDnnl<T, U>) {
#ifdef TX_HAVE_DNNL
      OP_REQUIRES_OK(ctx, DnnlBackward(ctx, l, is_training_, epsilon_, dy.data<float>(), x.data<float>(),
                                       ctx->input(2).data<float>(), ctx->input(3).data<float>(),
                                       ctx->input(4).data<float>(), dx->data<float>(),
                                       dscale->data<float>(), doffset->data<float>()));
#endif
    } else {
      const std::vector<double> scale = Doubles<U>(ctx->input(2)), mean = Doubles<U>(ctx->input(3));
      std::vector<double> inv = Doubles<U>(ctx->input(4));
      for (double& v : inv) v = 1.0 / std::sqrt(v + static_cast<double>(epsilon_));
      std::vector<double> ds, doff;
      BnLoops<T>::Backward(ctx, l, is_training_, dy.data<T>(), x.data<T>(), scale, mean, inv,
                           dx->data<T>(), &ds, &doff);
      for (int64_t c = 0; c < C; ++c) {
        dscale->data<U>()[c] = static_cast<U>(ds[c]);
        doffset->data<U>()[c] = static_cast<U>(doff[c]);
      }
    }
  }
};

#define TX_REGISTER_BN(T, U)                                                                 \
  REGISTER_KERNEL_BUILDER(Name("FusedBatchNormV3").Device(DEVICE_CPU).TypeConstraint<T>("T") \
                              .TypeConstraint<U>("U"),                                       \
                          FusedBatchNormOp<T, U>);                                           \
  REGISTER_KERNEL_BUILDER(Name("FusedBatchNormGradV3").Device(DEVICE_CPU)                    \
                              .TypeConstraint<T>("T").TypeConstraint<U>("U"),                \
                          FusedBatchNormGradOp<T, U>)
TX_REGISTER_BN(float, float);
TX_REGISTER_BN(Half, float);
TX_REGISTER_BN(BFloat16, float);
TX_REGISTER_BN(double, double);
#undef TX_REGISTER_BN

}  // namespace
}  // namespace tensorflux
