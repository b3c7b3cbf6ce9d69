// CPU kernel of _FusedMaxPoolGrad (ops/pooling_ops.cc), which the remapper pass
// (passes/remapper.cc) makes from MaxPoolGrad -> ReluGrad [-> BiasAddGrad] when the pooled tensor
// is the ReLU's output (conv -> ReLU -> max pooling, as in a CNN):
//
//   backprops     = ReluGrad(MaxPoolGrad(orig_input, orig_output, grad), orig_input)
//   bias_backprop = BiasAddGrad(backprops)                  (sum over N, H, W per channel)
//
// in one pass over orig_input, instead of a forward pooling pass to find the maxima, a backward
// pass, a ReluGrad pass and a BiasAddGrad pass. Windows must not overlap (strides >= ksize in
// both spatial dims, checked at construction: INVALID_ARGUMENT otherwise): then every input
// element belongs to at most one window, so each window's elements are written once, as
// grad[window] at the window's first maximum (row-major window order, as MaxPoolGrad) when that
// maximum is > 0 (ReluGrad: the ReLU's output is the features), and 0 elsewhere; elements in no
// window (strides > ksize, or VALID leaving rows or columns out) are 0. NaN compares false, as in
// MaxPoolGrad's `>` scan and ReluGrad's `> 0`.
//
// backprops is bit-identical to the unfused chain. bias_backprop sums the same nonzero values as
// BiasAddGrad in double precision, grouped differently: equal after rounding to T except when a
// sum falls within double rounding of a T rounding boundary. The sums are taken in fixed blocks
// of window rows added in block order, so results do not depend on the thread count.
// backprops may take orig_input's buffer (each window is read before any of it is written).
// Layout NHWC only (the pooling kernels' only layout); T float or double.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tensorflux/core/threadpool.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/shared/pool_kernel.h"
#include "tensorflux/ops/pool_window.h"

namespace tensorflux {
namespace {

// Elements of orig_input per block of bias partial sums (fixed: results do not depend on the
// thread count), and the estimated cost of one element in ns for ParallelFor (a load, a compare,
// a select and a store per element, 64 bytes at a time).
constexpr int64_t kBlockElements = 16384;
constexpr int64_t kCostPerElementNs = 1;
// How far ahead along each input row the loop prefetches (a prefetch hint past the buffer's end
// does not fault): orig_input is usually cold (the forward pass wrote it long before), and
// without prefetches the window loads stall on memory (the CNN step's pool1 gradient, one
// thread: per-node median 1.56-1.63 ms without, 0.91-1.34 ms with; 512 to 4096 bytes alike).
constexpr int64_t kPrefetchBytes = 1024;

// The input rows [begin, end) that window row `oy` owns: from its window's start (0 for the first)
// to the next window's start (in_rows for the last). Windows do not overlap, so these partition
// the rows.
int64_t RowsStart(const PoolWindow& w, int64_t oy) {
  if (oy >= w.out_rows) return w.in_rows;
  return std::clamp<int64_t>(oy * w.s_rows - w.pad_top, 0, w.in_rows);
}

// 64 bytes of T (GCC/Clang vector extensions: one AVX-512 register, or two or four narrower ones
// on other x86 targets), its comparison mask type, and unaligned loads and stores.
template <typename T>
struct Lanes {
  static constexpr int kN = static_cast<int>(64 / sizeof(T));
  typedef T Vec __attribute__((vector_size(64)));
  using Mask = decltype(Vec{} > Vec{});
  static Vec Load(const T* p) {
    Vec v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  }
  static void Store(T* p, const Vec& v) { std::memcpy(p, &v, sizeof(v)); }
};

template <typename T>
struct FusedPoolGrad {
  using L = Lanes<T>;
  using Vec = typename L::Vec;
  using Mask = typename L::Mask;

  // One window: its elements at in + pos[0..k) (row-major), each C channels; g the grad row of
  // its C channels; writes out at the same positions and adds the routed values to part[C].
  static void Window(const T* in, const T* g, const int64_t* pos, int k, int64_t C, T* out,
                     double* __restrict part) {
    int64_t c = 0;
    for (; c + L::kN <= C; c += L::kN) {  // L::kN channels at a time
      Vec best = L::Load(in + pos[0] + c);
      Mask arg = Mask{};  // window position of the first maximum, per lane
      for (int j = 1; j < k; ++j) {
        const Vec v = L::Load(in + pos[j] + c);
        const Mask more = v > best;
        best = more ? v : best;
        arg = more ? Mask{} + j : arg;
      }
      const Vec routed = best > Vec{} ? L::Load(g + c) : Vec{};
      for (int i = 0; i < L::kN; ++i) part[c + i] += static_cast<double>(routed[i]);
      for (int j = 0; j < k; ++j) L::Store(out + pos[j] + c, arg == Mask{} + j ? routed : Vec{});
    }
    for (; c < C; ++c) {  // the remaining channels one at a time
      T best = in[pos[0] + c];
      int arg = 0;
      for (int j = 1; j < k; ++j) {
        if (in[pos[j] + c] > best) best = in[pos[j] + c], arg = j;
      }
      const T routed = best > T(0) ? g[c] : T(0);
      part[c] += static_cast<double>(routed);
      for (int j = 0; j < k; ++j) out[pos[j] + c] = j == arg ? routed : T(0);
    }
  }

  // Window rows [r0, r1) (r = image * out_rows + oy): every input row each owns is written.
  static void Rows(const PoolWindow& w, const T* in, const T* grad, T* out, int64_t r0,
                   int64_t r1, double* part) {
    const int64_t C = w.depth, row = w.in_cols * C;
    const int64_t pos_bytes = C * static_cast<int64_t>(sizeof(T));  // one position's channels
    std::vector<int64_t> pos(static_cast<size_t>(w.k_rows * w.k_cols));
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t b = r / w.out_rows, oy = r % w.out_rows;
      const int64_t y_begin = RowsStart(w, oy), y_end = RowsStart(w, oy + 1);
      const int64_t y0 = std::max<int64_t>(oy * w.s_rows - w.pad_top, 0);
      const int64_t y1 = std::min<int64_t>(oy * w.s_rows - w.pad_top + w.k_rows, w.in_rows);
      const int64_t image = b * w.in_rows * row;
      // Rows of no window: zeros.
      for (int64_t y = y_begin; y < y_end; ++y) {
        if (y < y0 || y >= y1) std::fill_n(out + image + y * row, row, T(0));
      }
      int64_t done = 0;  // columns [0, done) of the window's rows are written
      for (int64_t ox = 0; ox < w.out_cols; ++ox) {
        const int64_t x0 = std::max<int64_t>(ox * w.s_cols - w.pad_left, 0);
        const int64_t x1 = std::min<int64_t>(ox * w.s_cols - w.pad_left + w.k_cols, w.in_cols);
        int k = 0;
        for (int64_t y = y0; y < y1; ++y) {
          if (x0 > done) std::fill_n(out + image + y * row + done * C, (x0 - done) * C, T(0));
          for (int64_t x = x0; x < x1; ++x) pos[k++] = image + y * row + x * C;
          const char* ahead = reinterpret_cast<const char*>(in + image + y * row + x0 * C);
          for (int64_t at = 0; at < (x1 - x0) * pos_bytes; at += 64) {
            __builtin_prefetch(ahead + kPrefetchBytes + at);
          }
        }
        const T* g = grad + ((b * w.out_rows + oy) * w.out_cols + ox) * C;
        __builtin_prefetch(reinterpret_cast<const char*>(g) + kPrefetchBytes);
        Window(in, g, pos.data(), k, C, out, part);
        done = x1;
      }
      for (int64_t y = y0; y < y1 && done < w.in_cols; ++y) {
        std::fill_n(out + image + y * row + done * C, (w.in_cols - done) * C, T(0));
      }
    }
  }

  static void Run(OpKernelContext* ctx, const PoolWindow& w, const T* in, const T* grad, T* out,
                  T* bias) {
    const int64_t C = w.depth;
    const int64_t units = w.batch * w.out_rows;
    const int64_t unit_elements = std::max<int64_t>(1, w.InputSize() / std::max<int64_t>(units, 1));
    const int64_t per_block = std::max<int64_t>(1, kBlockElements / unit_elements);
    const int64_t blocks = (units + per_block - 1) / per_block;
    std::vector<double> part(static_cast<size_t>(blocks * C), 0.0);
    auto run = [&](int64_t b0, int64_t b1) {
      for (int64_t blk = b0; blk < b1; ++blk) {
        Rows(w, in, grad, out, blk * per_block, std::min(units, (blk + 1) * per_block),
             part.data() + blk * C);
      }
    };
    ThreadPool* pool = ctx->intra_op_thread_pool();
    if (pool == nullptr || blocks < 2) {
      run(0, blocks);
    } else {
      pool->ParallelFor(blocks, per_block * unit_elements * kCostPerElementNs, run);
    }
    for (int64_t c = 0; c < C; ++c) {
      double s = 0;
      for (int64_t blk = 0; blk < blocks; ++blk) s += part[blk * C + c];
      bias[c] = static_cast<T>(s);
    }
  }
};

template <typename T>
class FusedMaxPoolGradOp : public PoolKernelBase {
 public:
  explicit FusedMaxPoolGradOp(OpKernelConstruction* ctx) : PoolKernelBase(ctx) {
    if (!ctx->status().ok()) return;
    if (attrs_.strides[1] < attrs_.ksize[1] || attrs_.strides[2] < attrs_.ksize[2]) {
      ctx->SetStatus(errors::InvalidArgument(
          type_string(), ": windows must not overlap (strides >= ksize), got ksize [",
          attrs_.ksize[1], ", ", attrs_.ksize[2], "] and strides [", attrs_.strides[1], ", ",
          attrs_.strides[2], "]"));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& grad = ctx->input(2);
    PoolWindow w;
    OP_REQUIRES_OK(ctx, MaxPoolGradWindow(ctx, &w));
    Tensor* out = nullptr;
    Tensor* bias = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({w.depth}), &bias));
    std::fill_n(bias->data<T>(), w.depth, T(0));
    if (w.InputSize() == 0 || w.OutputSize() == 0) {
      OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
      std::fill_n(out->data<T>(), out->NumElements(), T(0));
      return;
    }
    const T* in_data = in.data<T>();  // may become out's buffer: read before written, per window
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, in.shape(), &out));
    FusedPoolGrad<T>::Run(ctx, w, in_data, grad.data<T>(), out->data<T>(), bias->data<T>());
  }
};

REGISTER_KERNEL_BUILDER(Name("_FusedMaxPoolGrad").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                        FusedMaxPoolGradOp<float>);
REGISTER_KERNEL_BUILDER(Name("_FusedMaxPoolGrad").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                        FusedMaxPoolGradOp<double>);

}  // namespace
}  // namespace tensorflux
