// GPU kernels of Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter for float32 through cuDNN
// (the legacy descriptor API of cuDNN 9). Validation is the CPU kernels' (kernels/shared/
// conv_shapes.h over ops/conv_geometry.h): NHWC and NCHW, strides, dilations, SAME / VALID /
// EXPLICIT padding, grouped convolutions.
//
// Layout: activations go to cuDNN in their own layout. TF's HWIO filter is permuted to cuDNN's
// KRSC (NHWC data) or KCRS (NCHW data) in scratch memory, and a filter gradient back to HWIO
// (layout.cu). cuDNN pads symmetrically only: when TF's padding is asymmetric (SAME with an odd
// total puts the extra row at the bottom) the input is copied into a zero-padded buffer holding
// the difference, and cuDNN pads the common part; the input gradient is then computed for the
// padded input and cropped.
//
// Precision: CUDNN_FMA_MATH (no TF32 tensor-core math), so float32 results match the CPU to
// float32 rounding. Algorithms: cuDNN's heuristics (the _v7 queries), in their order, skipping
// tensor-core-only ones and those needing more than 4 GiB of workspace; one that cuDNN then
// reports as unsupported is skipped too. The working choice is cached per kernel and geometry.
#include <algorithm>
#include <climits>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tensorflux/kernels/cuda/cudnn_util.h"
#include "tensorflux/kernels/cuda/gpu_kernel_util.h"
#include "tensorflux/kernels/cuda/layout_launch.h"
#include "tensorflux/kernels/shared/conv_shapes.h"

namespace tensorflux {
namespace gpu {
namespace {

using conv::ConvGeometry;
using conv::Direction;

constexpr size_t kMaxWorkspace = size_t{4} << 30;

// The three directions' cuDNN entry points behind one interface.
struct Descriptors {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
};

template <typename Perf>
bool Usable(const Perf& p) {
  return p.status == CUDNN_STATUS_SUCCESS && p.memory <= kMaxWorkspace &&
         p.mathType != CUDNN_TENSOR_OP_MATH && p.mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

// Candidate algorithms for `dir`, best first (cuDNN's heuristics).
StatusOr<std::vector<int>> Candidates(cudnnHandle_t h, Direction dir, const Descriptors& d) {
  std::vector<int> out;
  int count = 0, returned = 0;
  if (dir == Direction::kForward) {
    TX_RETURN_IF_CUDA_ERROR(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &count));
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(std::max(count, 1));
    TX_RETURN_IF_CUDA_ERROR(cudnnGetConvolutionForwardAlgorithm_v7(
        h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(), count, &returned, perf.data()));
    for (int i = 0; i < returned; ++i) {
      if (Usable(perf[i])) out.push_back(perf[i].algo);
    }
  } else if (dir == Direction::kBackwardInput) {
    TX_RETURN_IF_CUDA_ERROR(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &count));
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(std::max(count, 1));
    TX_RETURN_IF_CUDA_ERROR(cudnnGetConvolutionBackwardDataAlgorithm_v7(
        h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(), count, &returned, perf.data()));
    for (int i = 0; i < returned; ++i) {
      if (Usable(perf[i])) out.push_back(perf[i].algo);
    }
  } else {
    TX_RETURN_IF_CUDA_ERROR(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &count));
    std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(std::max(count, 1));
    TX_RETURN_IF_CUDA_ERROR(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
        h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(), count, &returned, perf.data()));
    for (int i = 0; i < returned; ++i) {
      if (Usable(perf[i])) out.push_back(perf[i].algo);
    }
  }
  return out;
}

// Workspace bytes of `algo`; a not-supported cudnnStatus_t comes back in *status.
cudnnStatus_t WorkspaceSize(cudnnHandle_t h, Direction dir, const Descriptors& d, int algo,
                            size_t* bytes) {
  switch (dir) {
    case Direction::kForward:
      return cudnnGetConvolutionForwardWorkspaceSize(h, d.x.get(), d.w.get(), d.conv.get(),
                                                     d.y.get(),
                                                     static_cast<cudnnConvolutionFwdAlgo_t>(algo),
                                                     bytes);
    case Direction::kBackwardInput:
      return cudnnGetConvolutionBackwardDataWorkspaceSize(
          h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(),
          static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), bytes);
    case Direction::kBackwardFilter:
      return cudnnGetConvolutionBackwardFilterWorkspaceSize(
          h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(),
          static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), bytes);
  }
  return CUDNN_STATUS_BAD_PARAM;
}

// The convolution in direction `dir`: x, w, y are cuDNN-layout buffers; the computed one is
// overwritten (alpha 1, beta 0).
cudnnStatus_t Convolve(cudnnHandle_t h, Direction dir, const Descriptors& d, int algo, void* x,
                       void* w, void* y, void* ws, size_t ws_bytes) {
  const float one = 1, zero = 0;
  switch (dir) {
    case Direction::kForward:
      return cudnnConvolutionForward(h, &one, d.x.get(), x, d.w.get(), w, d.conv.get(),
                                     static_cast<cudnnConvolutionFwdAlgo_t>(algo), ws, ws_bytes,
                                     &zero, d.y.get(), y);
    case Direction::kBackwardInput:
      return cudnnConvolutionBackwardData(h, &one, d.w.get(), w, d.y.get(), y, d.conv.get(),
                                          static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), ws,
                                          ws_bytes, &zero, d.x.get(), x);
    case Direction::kBackwardFilter:
      return cudnnConvolutionBackwardFilter(h, &one, d.x.get(), x, d.y.get(), y, d.conv.get(),
                                            static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo),
                                            ws, ws_bytes, &zero, d.w.get(), w);
  }
  return CUDNN_STATUS_BAD_PARAM;
}

Status ToInt(int64_t v, const char* what, int* out) {
  if (v < 0 || v > INT_MAX) {
    return errors::Unimplemented("cuDNN takes 32-bit sizes: ", what, " is ", v);
  }
  *out = static_cast<int>(v);
  return OkStatus();
}

// The padding cuDNN applies (symmetric) and what the input buffer must add on each side.
struct PadSplit {
  int64_t common_h = 0, common_w = 0;
  int64_t top = 0, bottom = 0, left = 0, right = 0;  // explicit extra rows / columns
  bool explicit_pad() const { return top + bottom + left + right > 0; }
};

PadSplit SplitPadding(const ConvGeometry& g) {
  PadSplit p;
  p.common_h = std::min(g.pad_top, g.pad_bottom);
  p.common_w = std::min(g.pad_left, g.pad_right);
  p.top = g.pad_top - p.common_h;
  p.bottom = g.pad_bottom - p.common_h;
  p.left = g.pad_left - p.common_w;
  p.right = g.pad_right - p.common_w;
  return p;
}

class GpuConvOp : public OpKernel {
 public:
  explicit GpuConvOp(OpKernelConstruction* c) : OpKernel(c) {
    dir_ = type_string() == "Conv2D"                ? Direction::kForward
           : type_string() == "Conv2DBackpropInput" ? Direction::kBackwardInput
                                                    : Direction::kBackwardFilter;
    auto attrs = conv::ConvAttrs::FromNodeDef(c->def());
    if (!attrs.ok()) {
      c->SetStatus(attrs.status());
      return;
    }
    attrs_ = *attrs;
  }

  void Compute(OpKernelContext* ctx) override {
    conv::ConvOperands ops;
    OP_REQUIRES_OK(ctx, conv::ReadConvOperands(ctx, attrs_, dir_, false, &ops));
    Tensor* result = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, ops.result_shape, &result));
    if (result->NumElements() == 0) return;
    auto gc = GpuContextOf(ctx);
    OP_REQUIRES_OK(ctx, gc.status());
    const ConvGeometry& g = ops.g;
    if (g.InputShape().num_elements() == 0 || g.FilterShape().num_elements() == 0 ||
        g.OutputShape().num_elements() == 0) {  // an empty sum: zeros
      OP_REQUIRES_OK(ctx, CudaStatus(cudaMemsetAsync(result->raw_data(), 0,
                                                     result->TotalBytes(),
                                                     (*gc)->compute_stream()),
                                     "cudaMemsetAsync"));
      return;
    }
    OP_REQUIRES_OK(ctx, Run(ctx, *gc, ops, result));
  }

 private:
  Status Run(OpKernelContext* ctx, CudaContext* gc, const conv::ConvOperands& ops,
             Tensor* result) {
    const ConvGeometry& g = ops.g;
    const bool nhwc = g.format == conv::DataFormat::kNHWC;
    const PadSplit pad = SplitPadding(g);
    cudaStream_t stream = gc->compute_stream();
    const int64_t rows = g.in_rows + pad.top + pad.bottom;
    const int64_t cols = g.in_cols + pad.left + pad.right;
    // Memory-order dims of the input as given and as cuDNN sees it (padded).
    const int64_t in_dims[4] = {g.batch, nhwc ? g.in_rows : g.in_depth,
                                nhwc ? g.in_cols : g.in_rows, nhwc ? g.in_depth : g.in_cols};
    const int64_t padded_dims[4] = {g.batch, nhwc ? rows : g.in_depth, nhwc ? cols : rows,
                                    nhwc ? g.in_depth : cols};
    const int64_t shift[4] = {0, nhwc ? pad.top : 0, nhwc ? pad.left : pad.top,
                              nhwc ? 0 : pad.left};

    Descriptors d;
    TX_RETURN_IF_ERROR(Describe(g, pad, &d));

    // Operand buffers in cuDNN's layouts.
    Tensor x_buf, w_buf;
    void* x = nullptr;
    void* w = nullptr;
    void* y = dir_ == Direction::kForward ? result->raw_data()
                                          : const_cast<void*>(ops.out_backprop->raw_data());
    const int64_t hwio[4] = {g.filter_rows, g.filter_cols, g.group_in, g.out_depth};
    const int to_cudnn[4] = {3, 0, 1, 2};  // HWIO -> KRSC; KCRS below
    const int to_cudnn_nchw[4] = {3, 2, 0, 1};
    const int64_t filter_elems = g.FilterShape().num_elements();
    TX_RETURN_IF_ERROR(ctx->allocate_temp(DT_FLOAT, TensorShape({filter_elems}), &w_buf));
    w = w_buf.raw_data();
    if (dir_ != Direction::kBackwardFilter) {  // the filter is an operand: to cuDNN's layout
      TX_RETURN_IF_ERROR(LaunchStatus(
          *this, LaunchTranspose4(4, ops.filter->raw_data(), hwio, nhwc ? to_cudnn : to_cudnn_nchw,
                                  w, stream)));
    }
    if (pad.explicit_pad()) {
      TX_RETURN_IF_ERROR(ctx->allocate_temp(
          DT_FLOAT, TensorShape({padded_dims[0] * padded_dims[1] * padded_dims[2] * padded_dims[3]}),
          &x_buf));
      x = x_buf.raw_data();
      if (dir_ != Direction::kBackwardInput) {
        TX_RETURN_IF_ERROR(LaunchStatus(*this, LaunchShiftCopy4(4, ops.input->raw_data(), in_dims,
                                                                x, padded_dims, shift, stream)));
      }
    } else {
      x = dir_ == Direction::kBackwardInput ? result->raw_data()
                                            : const_cast<void*>(ops.input->raw_data());
    }

    TX_RETURN_IF_ERROR(RunCudnn(ctx, gc, g, d, x, w, y));

    if (dir_ == Direction::kBackwardInput && pad.explicit_pad()) {
      const int64_t crop[4] = {-shift[0], -shift[1], -shift[2], -shift[3]};
      TX_RETURN_IF_ERROR(LaunchStatus(
          *this, LaunchShiftCopy4(4, x, padded_dims, result->raw_data(), in_dims, crop, stream)));
    }
    if (dir_ == Direction::kBackwardFilter) {
      const int64_t krsc[4] = {g.out_depth, g.filter_rows, g.filter_cols, g.group_in};
      const int64_t kcrs[4] = {g.out_depth, g.group_in, g.filter_rows, g.filter_cols};
      const int from_krsc[4] = {1, 2, 3, 0}, from_kcrs[4] = {2, 3, 1, 0};
      TX_RETURN_IF_ERROR(LaunchStatus(
          *this, LaunchTranspose4(4, w, nhwc ? krsc : kcrs, nhwc ? from_krsc : from_kcrs,
                                  result->raw_data(), stream)));
    }
    return OkStatus();
  }

  // Tensor, filter and convolution descriptors for the (padded) geometry.
  Status Describe(const ConvGeometry& g, const PadSplit& pad, Descriptors* d) const {
    int n, c, h, w, k, kh, kw, gi, oh, ow, ph, pw, sh, sw, dh, dw, groups;
    TX_RETURN_IF_ERROR(ToInt(g.batch, "batch", &n));
    TX_RETURN_IF_ERROR(ToInt(g.in_depth, "input depth", &c));
    TX_RETURN_IF_ERROR(ToInt(g.in_rows + pad.top + pad.bottom, "input rows", &h));
    TX_RETURN_IF_ERROR(ToInt(g.in_cols + pad.left + pad.right, "input columns", &w));
    TX_RETURN_IF_ERROR(ToInt(g.out_depth, "output depth", &k));
    TX_RETURN_IF_ERROR(ToInt(g.filter_rows, "filter rows", &kh));
    TX_RETURN_IF_ERROR(ToInt(g.filter_cols, "filter columns", &kw));
    TX_RETURN_IF_ERROR(ToInt(g.group_in, "filter input depth", &gi));
    TX_RETURN_IF_ERROR(ToInt(g.out_rows, "output rows", &oh));
    TX_RETURN_IF_ERROR(ToInt(g.out_cols, "output columns", &ow));
    TX_RETURN_IF_ERROR(ToInt(pad.common_h, "padding", &ph));
    TX_RETURN_IF_ERROR(ToInt(pad.common_w, "padding", &pw));
    TX_RETURN_IF_ERROR(ToInt(g.stride_rows, "stride", &sh));
    TX_RETURN_IF_ERROR(ToInt(g.stride_cols, "stride", &sw));
    TX_RETURN_IF_ERROR(ToInt(g.dilation_rows, "dilation", &dh));
    TX_RETURN_IF_ERROR(ToInt(g.dilation_cols, "dilation", &dw));
    TX_RETURN_IF_ERROR(ToInt(g.groups, "groups", &groups));
    const cudnnTensorFormat_t format =
        g.format == conv::DataFormat::kNHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    TX_RETURN_IF_ERROR(d->x.Init());
    TX_RETURN_IF_ERROR(d->y.Init());
    TX_RETURN_IF_ERROR(d->w.Init());
    TX_RETURN_IF_ERROR(d->conv.Init());
    TX_RETURN_IF_CUDA_ERROR(cudnnSetTensor4dDescriptor(d->x.get(), format, CUDNN_DATA_FLOAT, n, c, h, w));
    TX_RETURN_IF_CUDA_ERROR(cudnnSetTensor4dDescriptor(d->y.get(), format, CUDNN_DATA_FLOAT, n, k, oh, ow));
    TX_RETURN_IF_CUDA_ERROR(cudnnSetFilter4dDescriptor(d->w.get(), CUDNN_DATA_FLOAT, format, k, gi, kh, kw));
    TX_RETURN_IF_CUDA_ERROR(cudnnSetConvolution2dDescriptor(d->conv.get(), ph, pw, sh, sw, dh, dw,
                                                            CUDNN_CROSS_CORRELATION,
                                                            CUDNN_DATA_FLOAT));
    TX_RETURN_IF_CUDA_ERROR(cudnnSetConvolutionGroupCount(d->conv.get(), groups));
    TX_RETURN_IF_CUDA_ERROR(cudnnSetConvolutionMathType(d->conv.get(), CUDNN_FMA_MATH));
    int on, oc, ohh, oww;
    TX_RETURN_IF_CUDA_ERROR(cudnnGetConvolution2dForwardOutputDim(d->conv.get(), d->x.get(),
                                                                  d->w.get(), &on, &oc, &ohh, &oww));
    if (on != n || oc != k || ohh != oh || oww != ow) {
      return errors::Internal(attrs_.Prefix(), "cuDNN's output shape [", on, ",", oc, ",", ohh,
                              ",", oww, "] differs from the geometry's [", n, ",", k, ",", oh,
                              ",", ow, "]");
    }
    return OkStatus();
  }

  // Runs the cached algorithm for g, or tries cuDNN's candidates in order and caches the first
  // that runs.
  Status RunCudnn(OpKernelContext* ctx, CudaContext* gc, const ConvGeometry& g,
                  const Descriptors& d, void* x, void* w, void* y) {
    absl::MutexLock lib(gc->library_mu());
    cudnnHandle_t h = gc->dnn();
    std::vector<int> candidates;
    {
      absl::MutexLock l(&cache_mu_);
      auto it = algo_cache_.find(g);
      if (it != algo_cache_.end()) candidates.push_back(it->second);
    }
    const bool cached = !candidates.empty();
    if (!cached) {
      TX_ASSIGN_OR_RETURN(candidates, Candidates(h, dir_, d));
    }
    cudnnStatus_t last = CUDNN_STATUS_NOT_SUPPORTED;
    for (int algo : candidates) {
      size_t bytes = 0;
      last = WorkspaceSize(h, dir_, d, algo, &bytes);
      if (IsNotSupported(last) || (last == CUDNN_STATUS_SUCCESS && bytes > kMaxWorkspace)) continue;
      TX_RETURN_IF_ERROR(CudaStatus(last, "cudnnGetConvolution*WorkspaceSize"));
      Tensor ws;
      if (bytes > 0) {
        TX_RETURN_IF_ERROR(ctx->allocate_temp(DT_UINT8, TensorShape({static_cast<int64_t>(bytes)}), &ws));
      }
      last = Convolve(h, dir_, d, algo, x, w, y, bytes > 0 ? ws.raw_data() : nullptr, bytes);
      if (IsNotSupported(last)) continue;
      TX_RETURN_IF_ERROR(CudaStatus(last, "cudnnConvolution*"));
      if (!cached) {
        absl::MutexLock l(&cache_mu_);
        algo_cache_[g] = algo;
      }
      return OkStatus();
    }
    return errors::Unimplemented(attrs_.Prefix(), "no cuDNN algorithm without tensor-core math "
                                 "runs this convolution (", cudnnGetErrorString(last), ")");
  }

  Direction dir_ = Direction::kForward;
  conv::ConvAttrs attrs_;
  absl::Mutex cache_mu_;
  absl::flat_hash_map<ConvGeometry, int> algo_cache_;
};

[[maybe_unused]] const bool kRegistered = [] {
  RegisterGpuKernel("Conv2D", "T", {DT_FLOAT},
                    [](OpKernelConstruction* c) { return new GpuConvOp(c); });
  RegisterGpuKernel("Conv2DBackpropInput", "T", {DT_FLOAT},
                    [](OpKernelConstruction* c) { return new GpuConvOp(c); }, {"input_sizes"});
  RegisterGpuKernel("Conv2DBackpropFilter", "T", {DT_FLOAT},
                    [](OpKernelConstruction* c) { return new GpuConvOp(c); }, {"filter_sizes"});
  return true;
}();

}  // namespace
}  // namespace gpu
}  // namespace tensorflux
