// GPU kernels of BiasAdd, BiasAddGrad, Softmax, LogSoftmax, SoftmaxCrossEntropyWithLogits and
// SparseSoftmaxCrossEntropyWithLogits for float and double (math: nn.cu, BiasAddGrad through
// the reductions of reduce.cu). Validation is the CPU kernels' (kernels/shared/nn_shape.h).
// Sparse labels live in GPU memory; one outside [0, classes) gives NaN loss and backprop for its
// row instead of an error (TF's GPU kernel; checking would need a device -> host copy).
#include "tensorflux/kernels/cuda/gpu_kernel_util.h"
#include "tensorflux/kernels/cuda/nn_launch.h"
#include "tensorflux/kernels/cuda/reduce_launch.h"
#include "tensorflux/kernels/shared/nn_shape.h"

namespace tensorflux {
namespace gpu {
namespace {

using nn_kernels::KernelError;

// The element type of input 0, checked at construction.
class GpuNnBase : public OpKernel {
 protected:
  explicit GpuNnBase(OpKernelConstruction* c) : OpKernel(c) {
    const DataType dt = BaseType(c->input_types()[0]);
    if (!ToElemType(dt, &elem_) || (dt != DT_FLOAT && dt != DT_DOUBLE)) {
      c->SetStatus(KernelError(*this, "no GPU kernel for dtype ", DataTypeString(dt)));
    }
  }
  ElemType elem_ = ElemType::kFloat;
};

class GpuBiasAddOp : public GpuNnBase {
 public:
  explicit GpuBiasAddOp(OpKernelConstruction* c) : GpuNnBase(c) {
    c->SetStatus(nn_kernels::ReadDataFormat(c, &nchw_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    nn_kernels::BiasLayout l;
    OP_REQUIRES_OK(ctx, nn_kernels::CheckBiasAdd(*this, value, bias, nchw_, &l));
    const void* x = value.raw_data();  // before forwarding may hand it to the output
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, value.shape(), &out));
    const int64_t n = value.shape().num_elements();
    if (n == 0) return;
    auto gc = GpuContextOf(ctx);
    OP_REQUIRES_OK(ctx, gc.status());
    OP_REQUIRES_OK(ctx, LaunchStatus(*this, LaunchBiasAdd(elem_, x, bias.raw_data(),
                                                          out->raw_data(), n, l.channels, l.inner,
                                                          (*gc)->compute_stream())));
  }

 private:
  bool nchw_ = false;
};

class GpuBiasAddGradOp : public GpuNnBase {
 public:
  explicit GpuBiasAddGradOp(OpKernelConstruction* c) : GpuNnBase(c) {
    c->SetStatus(nn_kernels::ReadDataFormat(c, &nchw_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& g = ctx->input(0);
    nn_kernels::BiasLayout l;
    OP_REQUIRES_OK(ctx, nn_kernels::BiasLayoutOf(*this, g.shape(), nchw_, &l));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({l.channels}), &out));
    if (l.channels == 0) return;
    if (g.NumElements() == 0) {  // an empty sum: zeros
      auto gc = GpuContextOf(ctx);
      OP_REQUIRES_OK(ctx, gc.status());
      OP_REQUIRES_OK(ctx, CudaStatus(cudaMemsetAsync(out->raw_data(), 0, out->TotalBytes(),
                                                     (*gc)->compute_stream()),
                                     "cudaMemsetAsync"));
      return;
    }
    // [outer, C, inner]: sum over outer and inner.
    OP_REQUIRES_OK(ctx, RunReduction(ctx, *this, ReduceKind::kSum, elem_, g,
                                     {l.outer, l.channels, l.inner}, {true, false, true}, out));
  }

 private:
  bool nchw_ = false;
};

class GpuSoftmaxOp : public GpuNnBase {
 public:
  explicit GpuSoftmaxOp(OpKernelConstruction* c) : GpuNnBase(c) {
    log_ = type_string() == "LogSoftmax";
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    OP_REQUIRES_OK(ctx, nn_kernels::CheckLogits(*this, logits.shape()));
    const TensorShape shape = logits.shape();
    const void* x = logits.raw_data();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, shape, &out));
    if (shape.num_elements() == 0) return;
    const int64_t n = shape.dim_size(shape.dims() - 1);
    auto gc = GpuContextOf(ctx);
    OP_REQUIRES_OK(ctx, gc.status());
    OP_REQUIRES_OK(ctx, LaunchStatus(*this, LaunchSoftmax(elem_, log_, x, out->raw_data(),
                                                          shape.num_elements() / n, n,
                                                          (*gc)->compute_stream())));
  }

 private:
  bool log_ = false;
};

class GpuXentOp : public GpuNnBase {
 public:
  explicit GpuXentOp(OpKernelConstruction* c) : GpuNnBase(c) {
    sparse_ = type_string() == "SparseSoftmaxCrossEntropyWithLogits";
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    XentArgs a;
    TensorShape backprop_shape;
    if (sparse_) {
      OP_REQUIRES_OK(ctx, nn_kernels::CheckSparseXent(*this, features, labels, &a.batch,
                                                      &a.classes));
      backprop_shape = features.shape();
    } else {
      nn_kernels::XentShape xs;
      OP_REQUIRES_OK(ctx, nn_kernels::CheckXent(*this, features.shape(), labels.shape(), &xs));
      a.batch = xs.batch;
      a.classes = xs.classes;
      a.f_row = xs.features.row_stride;
      a.f_col = xs.features.col_stride;
      a.l_row = xs.labels.row_stride;
      a.l_col = xs.labels.col_stride;
      backprop_shape = xs.backprop_shape;
    }
    Tensor* loss = nullptr;
    Tensor* backprop = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({a.batch}), &loss));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, backprop_shape, &backprop));
    if (a.batch == 0) return;
    auto gc = GpuContextOf(ctx);
    OP_REQUIRES_OK(ctx, gc.status());
    cudaStream_t stream = (*gc)->compute_stream();
    if (a.classes == 0) {
      // Dense: an empty sum (zero loss). Sparse: every label is out of range: NaN (all-ones
      // bits are a NaN in float and double).
      OP_REQUIRES_OK(ctx, CudaStatus(cudaMemsetAsync(loss->raw_data(), sparse_ ? 0xff : 0,
                                                     loss->TotalBytes(), stream),
                                     "cudaMemsetAsync"));
      return;
    }
    cudaError_t e;
    if (sparse_) {
      e = LaunchSparseXent(elem_, labels.dtype() == DT_INT64, features.raw_data(),
                           labels.raw_data(), a.batch, a.classes, loss->raw_data(),
                           backprop->raw_data(), stream);
    } else {
      OP_REQUIRES(ctx, labels.dtype() == features.dtype(),
                  KernelError(*this, "logits and labels dtypes differ"));
      e = LaunchXent(elem_, features.raw_data(), labels.raw_data(), a, loss->raw_data(),
                     backprop->raw_data(), stream);
    }
    OP_REQUIRES_OK(ctx, LaunchStatus(*this, e));
  }

 private:
  bool sparse_ = false;
};

[[maybe_unused]] const bool kRegistered = [] {
  const auto types = {DT_FLOAT, DT_DOUBLE};
  RegisterGpuKernel("BiasAdd", "T", types,
                    [](OpKernelConstruction* c) { return new GpuBiasAddOp(c); });
  RegisterGpuKernel("BiasAddGrad", "T", types,
                    [](OpKernelConstruction* c) { return new GpuBiasAddGradOp(c); });
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    RegisterGpuKernel(op, "T", types, [](OpKernelConstruction* c) { return new GpuSoftmaxOp(c); });
  }
  for (const char* op : {"SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits"}) {
    RegisterGpuKernel(op, "T", types, [](OpKernelConstruction* c) { return new GpuXentOp(c); });
  }
  return true;
}();

}  // namespace
}  // namespace gpu
}  // namespace tensorflux
