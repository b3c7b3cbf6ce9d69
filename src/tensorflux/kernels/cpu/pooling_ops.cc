// CPU kernels of MaxPool, AvgPool, MaxPoolGrad, AvgPoolGrad and MaxPoolGradGrad
// (ops/pooling_ops.cc), NHWC only.
//
// float32: oneDNN pooling primitives (kernels/cpu/dnnl_util.h): pooling_max and
//   pooling_avg_exclude_padding (TF's AvgPool divides by the number of valid elements).
//   MaxPoolGrad runs the forward pass again as forward_training to get oneDNN's workspace (the
//   argmax of every window) and then the backward primitive; oneDNN keeps the first maximum of a
//   window, as TF does (tested with ties).
// float64, half, bfloat16 and the integer types (MaxPool, MaxPoolGrad, MaxPoolGradGrad): one
//   direct-loop template (PoolLoops) — oneDNN has no float64, and the gradient checker needs
//   float64. Half and bfloat16 average
//   in float. The loops split the batch x output-rows space over the intra-op pool. Without
//   oneDNN (TX_HAVE_DNNL undefined) float32 uses the loops too. MaxPoolGradGrad (no oneDNN
//   counterpart) uses the loops for every dtype.
// Validation (INVALID_ARGUMENT): attrs as in ops/pool_window.h; the input must be rank 4 and the
// window must fit; MaxPoolGrad's orig_output and grad and AvgPoolGrad's grad must have the pooled
// shape; AvgPoolGrad's orig_input_shape must be 4 non-negative int32 values.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/cpu/dnnl_util.h"
#include "tensorflux/kernels/shared/pool_kernel.h"
#include "tensorflux/ops/pool_window.h"

namespace tensorflux {
namespace {

enum class PoolKind { kMax, kAvg };

// Accumulator type: float for the 16-bit floats, the type itself otherwise (integers only max).
template <typename T>
using PoolAcc = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// The valid input range [lo, hi) of output position o along one dimension.
inline void WindowRange(int64_t o, int64_t stride, int64_t pad, int64_t k, int64_t in,
                        int64_t* lo, int64_t* hi) {
  const int64_t start = o * stride - pad;
  *lo = std::max<int64_t>(start, 0);
  *hi = std::min<int64_t>(start + k, in);
}

// Runs fn(begin, end) over [0, total) on the intra-op pool when there is one.
template <typename Fn>
void Shard(OpKernelContext* ctx, int64_t total, int64_t cost_per_unit, const Fn& fn) {
  ThreadPool* pool = ctx->intra_op_thread_pool();
  if (pool == nullptr || total <= 1) {
    fn(int64_t{0}, total);
  } else {
    pool->ParallelFor(total, cost_per_unit, fn);
  }
}

// The direct loops, one template for every dtype (see the file comment).
template <typename T>
struct PoolLoops {
  using Acc = PoolAcc<T>;

  static void Forward(OpKernelContext* ctx, const PoolWindow& w, PoolKind kind, const T* in,
                      T* out) {
    const int64_t C = w.depth;
    const int64_t cost = w.out_cols * w.k_rows * w.k_cols * C;
    Shard(ctx, w.batch * w.out_rows, cost, [&](int64_t r0, int64_t r1) {
      std::vector<Acc> acc(static_cast<size_t>(C));
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t b = r / w.out_rows, oy = r % w.out_rows;
        int64_t y0, y1;
        WindowRange(oy, w.s_rows, w.pad_top, w.k_rows, w.in_rows, &y0, &y1);
        for (int64_t ox = 0; ox < w.out_cols; ++ox) {
          int64_t x0, x1;
          WindowRange(ox, w.s_cols, w.pad_left, w.k_cols, w.in_cols, &x0, &x1);
          T* o = out + ((b * w.out_rows + oy) * w.out_cols + ox) * C;
          const T* first = in + ((b * w.in_rows + y0) * w.in_cols + x0) * C;
          for (int64_t c = 0; c < C; ++c) acc[c] = kind == PoolKind::kMax ? Acc(first[c]) : Acc(0);
          for (int64_t y = y0; y < y1; ++y) {
            for (int64_t x = x0; x < x1; ++x) {
              const T* p = in + ((b * w.in_rows + y) * w.in_cols + x) * C;
              if (kind == PoolKind::kMax) {
                for (int64_t c = 0; c < C; ++c) acc[c] = std::max(acc[c], Acc(p[c]));
              } else {
                for (int64_t c = 0; c < C; ++c) acc[c] += Acc(p[c]);
              }
            }
          }
          if (kind == PoolKind::kMax) {
            for (int64_t c = 0; c < C; ++c) o[c] = static_cast<T>(acc[c]);
          } else {
            const Acc count = static_cast<Acc>((y1 - y0) * (x1 - x0));
            for (int64_t c = 0; c < C; ++c) o[c] = static_cast<T>(acc[c] / count);
          }
        }
      }
    });
  }

  // in_grad (input-shaped, zeroed here) += each grad element routed back through its window:
  // to the first maximum of `in` (max) or spread evenly over the valid elements (avg).
  static void Backward(OpKernelContext* ctx, const PoolWindow& w, PoolKind kind, const T* in,
                       const T* grad, T* in_grad) {
    const int64_t C = w.depth;
    const int64_t image = w.in_rows * w.in_cols * C;
    const int64_t cost = w.out_rows * w.out_cols * w.k_rows * w.k_cols * C;
    Shard(ctx, w.batch, cost, [&](int64_t b0, int64_t b1) {
      std::vector<Acc> sum(static_cast<size_t>(image));
      std::vector<Acc> best(static_cast<size_t>(C));
      std::vector<int64_t> arg(static_cast<size_t>(C));
      for (int64_t b = b0; b < b1; ++b) {
        std::fill(sum.begin(), sum.end(), Acc(0));
        const T* img = in == nullptr ? nullptr : in + b * image;
        for (int64_t oy = 0; oy < w.out_rows; ++oy) {
          int64_t y0, y1;
          WindowRange(oy, w.s_rows, w.pad_top, w.k_rows, w.in_rows, &y0, &y1);
          for (int64_t ox = 0; ox < w.out_cols; ++ox) {
            int64_t x0, x1;
            WindowRange(ox, w.s_cols, w.pad_left, w.k_cols, w.in_cols, &x0, &x1);
            const T* g = grad + ((b * w.out_rows + oy) * w.out_cols + ox) * C;
            if (kind == PoolKind::kAvg) {
              const Acc count = static_cast<Acc>((y1 - y0) * (x1 - x0));
              for (int64_t y = y0; y < y1; ++y)
                for (int64_t x = x0; x < x1; ++x)
                  for (int64_t c = 0; c < C; ++c)
                    sum[(y * w.in_cols + x) * C + c] += Acc(g[c]) / count;
              continue;
            }
            const int64_t first = (y0 * w.in_cols + x0) * C;
            for (int64_t c = 0; c < C; ++c) best[c] = Acc(img[first + c]), arg[c] = first + c;
            for (int64_t y = y0; y < y1; ++y) {
              for (int64_t x = x0; x < x1; ++x) {
                const int64_t pos = (y * w.in_cols + x) * C;
                for (int64_t c = 0; c < C; ++c) {
                  if (Acc(img[pos + c]) > best[c]) best[c] = Acc(img[pos + c]), arg[c] = pos + c;
                }
              }
            }
            for (int64_t c = 0; c < C; ++c) sum[arg[c]] += Acc(g[c]);
          }
        }
        T* out = in_grad + b * image;
        for (int64_t i = 0; i < image; ++i) out[i] = static_cast<T>(sum[i]);
      }
    });
  }
  // out[window] = g[first maximum of `in` in the window] (g has the input's shape).
  static void GatherAtMax(OpKernelContext* ctx, const PoolWindow& w, const T* in, const T* g,
                          T* out) {
    const int64_t C = w.depth;
    Shard(ctx, w.batch * w.out_rows, w.out_cols * w.k_rows * w.k_cols * C,
          [&](int64_t r0, int64_t r1) {
      std::vector<Acc> best(static_cast<size_t>(C));
      std::vector<int64_t> arg(static_cast<size_t>(C));
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t b = r / w.out_rows, oy = r % w.out_rows;
        int64_t y0, y1;
        WindowRange(oy, w.s_rows, w.pad_top, w.k_rows, w.in_rows, &y0, &y1);
        for (int64_t ox = 0; ox < w.out_cols; ++ox) {
          int64_t x0, x1;
          WindowRange(ox, w.s_cols, w.pad_left, w.k_cols, w.in_cols, &x0, &x1);
          const int64_t first = ((b * w.in_rows + y0) * w.in_cols + x0) * C;
          for (int64_t c = 0; c < C; ++c) best[c] = Acc(in[first + c]), arg[c] = first + c;
          for (int64_t y = y0; y < y1; ++y) {
            for (int64_t x = x0; x < x1; ++x) {
              const int64_t pos = ((b * w.in_rows + y) * w.in_cols + x) * C;
              for (int64_t c = 0; c < C; ++c) {
                if (Acc(in[pos + c]) > best[c]) best[c] = Acc(in[pos + c]), arg[c] = pos + c;
              }
            }
          }
          T* o = out + ((b * w.out_rows + oy) * w.out_cols + ox) * C;
          for (int64_t c = 0; c < C; ++c) o[c] = g[arg[c]];
        }
      }
    });
  }
};

#ifdef TX_HAVE_DNNL
// oneDNN's pooling descriptor for the window (logical dims N, C, H, W; tensors NHWC).
dnnl::pooling_forward::desc DnnlPoolDesc(const PoolWindow& w, PoolKind kind,
                                         dnnl::prop_kind prop) {
  const auto alg = kind == PoolKind::kMax ? dnnl::algorithm::pooling_max
                                          : dnnl::algorithm::pooling_avg_exclude_padding;
  return dnnl::pooling_forward::desc(
      prop, alg, dnnl_util::Nhwc(w.batch, w.in_rows, w.in_cols, w.depth),
      dnnl_util::Nhwc(w.batch, w.out_rows, w.out_cols, w.depth), {w.s_rows, w.s_cols},
      {w.k_rows, w.k_cols}, {w.pad_top, w.pad_left}, {w.pad_bottom, w.pad_right});
}

Status DnnlForward(OpKernelContext* ctx, const PoolWindow& w, PoolKind kind, const float* in,
                   float* out) {
  Status alloc;
  Tensor buf;  // the scratchpad, alive until Run has waited for the stream
  Status run = dnnl_util::Run(ctx, "pooling forward", [&](dnnl::stream& s) {
    dnnl::pooling_forward::primitive_desc pd(
        DnnlPoolDesc(w, kind, dnnl::prop_kind::forward_inference),
        dnnl_util::UserScratchpadAttr(), dnnl_util::CpuEngine());
    dnnl::memory scratchpad;
    alloc = dnnl_util::Scratchpad(ctx, pd.scratchpad_desc(), &buf, &scratchpad);
    if (!alloc.ok()) return;
    dnnl::pooling_forward(pd).execute(s, {{DNNL_ARG_SRC, dnnl_util::Wrap(pd.src_desc(), in)},
                                          {DNNL_ARG_DST, dnnl_util::Wrap(pd.dst_desc(), out)},
                                          {DNNL_ARG_SCRATCHPAD, scratchpad}});
  });
  TX_RETURN_IF_ERROR(alloc);
  return run;
}

// `in` is needed for max pooling only (the forward pass that fills the workspace).
Status DnnlBackward(OpKernelContext* ctx, const PoolWindow& w, PoolKind kind, const float* in,
                    const float* grad, float* in_grad) {
  Tensor fwd_out, workspace, bwd_buf, fwd_buf;  // alive until Run has waited for the stream
  Status alloc;
  Status run = dnnl_util::Run(ctx, "pooling backward", [&](dnnl::stream& s) {
    const auto& engine = dnnl_util::CpuEngine();
    const dnnl::primitive_attr attr = dnnl_util::UserScratchpadAttr();
    dnnl::pooling_forward::primitive_desc fwd_pd(
        DnnlPoolDesc(w, kind, dnnl::prop_kind::forward_training), attr, engine);
    const auto alg = kind == PoolKind::kMax ? dnnl::algorithm::pooling_max
                                            : dnnl::algorithm::pooling_avg_exclude_padding;
    dnnl::pooling_backward::desc bwd(
        alg, dnnl_util::Nhwc(w.batch, w.in_rows, w.in_cols, w.depth),
        dnnl_util::Nhwc(w.batch, w.out_rows, w.out_cols, w.depth), {w.s_rows, w.s_cols},
        {w.k_rows, w.k_cols}, {w.pad_top, w.pad_left}, {w.pad_bottom, w.pad_right});
    dnnl::pooling_backward::primitive_desc bwd_pd(bwd, attr, engine, fwd_pd);
    dnnl::memory bwd_scratchpad, fwd_scratchpad;
    alloc = dnnl_util::Scratchpad(ctx, bwd_pd.scratchpad_desc(), &bwd_buf, &bwd_scratchpad);
    if (!alloc.ok()) return;
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_DIFF_DST, dnnl_util::Wrap(bwd_pd.diff_dst_desc(), grad)},
        {DNNL_ARG_DIFF_SRC, dnnl_util::Wrap(bwd_pd.diff_src_desc(), in_grad)},
        {DNNL_ARG_SCRATCHPAD, bwd_scratchpad}};
    if (kind == PoolKind::kMax) {
      const int64_t ws_bytes = static_cast<int64_t>(fwd_pd.workspace_desc().get_size());
      alloc = ctx->allocate_temp(DT_FLOAT, TensorShape({w.OutputSize()}), &fwd_out);
      if (alloc.ok()) {
        alloc = ctx->allocate_temp(DT_UINT8, TensorShape({std::max<int64_t>(ws_bytes, 1)}),
                                   &workspace);
      }
      if (alloc.ok()) {
        alloc = dnnl_util::Scratchpad(ctx, fwd_pd.scratchpad_desc(), &fwd_buf, &fwd_scratchpad);
      }
      if (!alloc.ok()) return;
      auto ws = dnnl_util::Wrap(fwd_pd.workspace_desc(), workspace.data<uint8_t>());
      dnnl::pooling_forward(fwd_pd).execute(
          s, {{DNNL_ARG_SRC, dnnl_util::Wrap(fwd_pd.src_desc(), in)},
              {DNNL_ARG_DST, dnnl_util::Wrap(fwd_pd.dst_desc(), fwd_out.data<float>())},
              {DNNL_ARG_WORKSPACE, ws},
              {DNNL_ARG_SCRATCHPAD, fwd_scratchpad}});
      args.insert({DNNL_ARG_WORKSPACE, ws});
    }
    dnnl::pooling_backward(bwd_pd).execute(s, args);
  });
  TX_RETURN_IF_ERROR(alloc);
  return run;
}
#endif  // TX_HAVE_DNNL

template <typename T>
void RunForward(OpKernelContext* ctx, const PoolWindow& w, PoolKind kind, const T* in, T* out) {
#ifdef TX_HAVE_DNNL
  if constexpr (std::is_same_v<T, float>) {
    OP_REQUIRES_OK(ctx, DnnlForward(ctx, w, kind, in, out));
    return;
  }
#endif
  PoolLoops<T>::Forward(ctx, w, kind, in, out);
}

template <typename T>
void RunBackward(OpKernelContext* ctx, const PoolWindow& w, PoolKind kind, const T* in,
                 const T* grad, T* in_grad) {
#ifdef TX_HAVE_DNNL
  if constexpr (std::is_same_v<T, float>) {
    OP_REQUIRES_OK(ctx, DnnlBackward(ctx, w, kind, in, grad, in_grad));
    return;
  }
#endif
  PoolLoops<T>::Backward(ctx, w, kind, in, grad, in_grad);
}

template <typename T, PoolKind kKind>
class PoolOp : public PoolKernelBase {
 public:
  using PoolKernelBase::PoolKernelBase;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    PoolWindow w;
    OP_REQUIRES_OK(ctx, Window(in.shape(), &w));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, PooledShape(w), &out));
    if (w.OutputSize() == 0) return;
    RunForward<T>(ctx, w, kKind, in.data<T>(), out->data<T>());
  }
};

template <typename T>
class MaxPoolGradOp : public PoolKernelBase {
 public:
  using PoolKernelBase::PoolKernelBase;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& grad = ctx->input(2);
    PoolWindow w;
    OP_REQUIRES_OK(ctx, MaxPoolGradWindow(ctx, &w));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    if (out->NumElements() == 0) return;
    if (w.OutputSize() == 0) {
      std::fill_n(out->data<T>(), out->NumElements(), T());
      return;
    }
    RunBackward<T>(ctx, w, PoolKind::kMax, in.data<T>(), grad.data<T>(), out->data<T>());
  }
};

template <typename T>
class AvgPoolGradOp : public PoolKernelBase {
 public:
  using PoolKernelBase::PoolKernelBase;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& grad = ctx->input(1);
    TensorShape in_shape;
    PoolWindow w;
    OP_REQUIRES_OK(ctx, AvgPoolGradWindow(ctx, &in_shape, &w));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in_shape, &out));
    if (out->NumElements() == 0) return;
    if (w.OutputSize() == 0) {
      std::fill_n(out->data<T>(), out->NumElements(), T());
      return;
    }
    RunBackward<T>(ctx, w, PoolKind::kAvg, nullptr, grad.data<T>(), out->data<T>());
  }
};

template <typename T>
class MaxPoolGradGradOp : public PoolKernelBase {
 public:
  using PoolKernelBase::PoolKernelBase;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& grad = ctx->input(2);
    PoolWindow w;
    TensorShape pooled;
    OP_REQUIRES_OK(ctx, OrigWindow(ctx, &w, &pooled));
    OP_REQUIRES(ctx, grad.shape() == in.shape(),
                errors::InvalidArgument("MaxPoolGradGrad: grad has shape ",
                                        grad.shape().DebugString(), ", expected orig_input's "
                                        "shape ", in.shape().DebugString()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, pooled, &out));
    if (w.OutputSize() == 0) return;
    PoolLoops<T>::GatherAtMax(ctx, w, in.data<T>(), grad.data<T>(), out->data<T>());
  }
};

template <typename T>
using MaxPoolOp = PoolOp<T, PoolKind::kMax>;
template <typename T>
using AvgPoolOp = PoolOp<T, PoolKind::kAvg>;

#define TX_REGISTER_FLOAT_POOL(T)                                                          \
  REGISTER_KERNEL_BUILDER(Name("MaxPool").Device(DEVICE_CPU).TypeConstraint<T>("T"),       \
                          MaxPoolOp<T>);                                                   \
  REGISTER_KERNEL_BUILDER(Name("AvgPool").Device(DEVICE_CPU).TypeConstraint<T>("T"),       \
                          AvgPoolOp<T>);                                                   \
  REGISTER_KERNEL_BUILDER(Name("MaxPoolGrad").Device(DEVICE_CPU).TypeConstraint<T>("T"),   \
                          MaxPoolGradOp<T>);                                               \
  REGISTER_KERNEL_BUILDER(Name("AvgPoolGrad").Device(DEVICE_CPU).TypeConstraint<T>("T"),   \
                          AvgPoolGradOp<T>);                                               \
  REGISTER_KERNEL_BUILDER(Name("MaxPoolGradGrad").Device(DEVICE_CPU).TypeConstraint<T>("T"), \
                          MaxPoolGradGradOp<T>)
TX_REGISTER_FLOAT_POOL(float);
TX_REGISTER_FLOAT_POOL(double);
TX_REGISTER_FLOAT_POOL(Half);
TX_REGISTER_FLOAT_POOL(BFloat16);
#undef TX_REGISTER_FLOAT_POOL

// The integer types of the ops (TF's CPU registers the same): max pooling and its gradients.
#define TX_REGISTER_INT_POOL(T)                                                                \
  REGISTER_KERNEL_BUILDER(Name("MaxPool").Device(DEVICE_CPU).TypeConstraint<T>("T"),           \
                          MaxPoolOp<T>);                                                       \
  REGISTER_KERNEL_BUILDER(Name("MaxPoolGrad").Device(DEVICE_CPU).TypeConstraint<T>("T"),       \
                          MaxPoolGradOp<T>);                                                   \
  REGISTER_KERNEL_BUILDER(Name("MaxPoolGradGrad").Device(DEVICE_CPU).TypeConstraint<T>("T"),   \
                          MaxPoolGradGradOp<T>)
TX_REGISTER_INT_POOL(int8_t);
TX_REGISTER_INT_POOL(uint8_t);
TX_REGISTER_INT_POOL(int16_t);
TX_REGISTER_INT_POOL(uint16_t);
TX_REGISTER_INT_POOL(int32_t);
TX_REGISTER_INT_POOL(int64_t);
#undef TX_REGISTER_INT_POOL

}  // namespace
}  // namespace tensorflux
