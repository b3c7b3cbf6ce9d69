// GPU kernels of the elementwise family (TensorFlow's cwise ops) for float and double (bool for
// LogicalAnd/Or/Not): one kernel class per arity, the op chosen by a table, the math in cwise.cu.
// Validation is the CPU kernels' (kernels/shared/cwise_shape.h): dtypes, broadcasting,
// same-shape inputs for the *Grad ops, Equal/NotEqual's incompatible_shape_error. As on the CPU,
// an output reuses an input buffer no one else holds.
//
//   unary   Neg Square Sqrt Exp Log Abs Sign Reciprocal Rsqrt Log1p Tanh Sigmoid Erf Cos Sin
//           Relu Relu6 LeakyRelu Elu Selu Softplus LogicalNot
//   binary  Add AddV2 Sub Mul RealDiv Maximum Minimum Pow SquaredDifference FloorDiv
//           FloorMod Less LessEqual Greater GreaterEqual Equal NotEqual LogicalAnd LogicalOr
//           ReluGrad Relu6Grad LeakyReluGrad SoftplusGrad EluGrad SeluGrad TanhGrad SigmoidGrad
//           RsqrtGrad SqrtGrad ReciprocalGrad
//   AddN    N same-shape inputs
#include <cstring>

#include "tensorflux/kernels/cuda/cwise_launch.h"
#include "tensorflux/kernels/cuda/gpu_kernel_util.h"
#include "tensorflux/kernels/shared/cwise_shape.h"

namespace tensorflux {
namespace {

using gpu::BinaryKind;
using gpu::UnaryKind;

struct UnaryEntry {
  const char* op;
  UnaryKind kind;
};
constexpr UnaryEntry kUnaryOps[] = {
    {"Neg", UnaryKind::kNeg},         {"Square", UnaryKind::kSquare},
    {"Sqrt", UnaryKind::kSqrt},       {"Exp", UnaryKind::kExp},
    {"Log", UnaryKind::kLog},         {"Abs", UnaryKind::kAbs},
    {"Sign", UnaryKind::kSign},       {"Reciprocal", UnaryKind::kReciprocal},
    {"Rsqrt", UnaryKind::kRsqrt},     {"Log1p", UnaryKind::kLog1p},
    {"Tanh", UnaryKind::kTanh},       {"Sigmoid", UnaryKind::kSigmoid},
    {"Erf", UnaryKind::kErf},         {"Cos", UnaryKind::kCos},
    {"Sin", UnaryKind::kSin},         {"Relu", UnaryKind::kRelu},
    {"Relu6", UnaryKind::kRelu6},     {"LeakyRelu", UnaryKind::kLeakyRelu},
    {"Elu", UnaryKind::kElu},         {"Selu", UnaryKind::kSelu},
    {"Softplus", UnaryKind::kSoftplus},
};

struct BinaryEntry {
  const char* op;
  BinaryKind kind;
  bool same_shape;  // TF's *Grad ops: no broadcasting
};
constexpr BinaryEntry kBinaryOps[] = {
    {"Add", BinaryKind::kAdd, false},
    {"AddV2", BinaryKind::kAdd, false},
    {"Sub", BinaryKind::kSub, false},
    {"Mul", BinaryKind::kMul, false},
    {"RealDiv", BinaryKind::kRealDiv, false},
    {"Maximum", BinaryKind::kMaximum, false},
    {"Minimum", BinaryKind::kMinimum, false},
    {"Pow", BinaryKind::kPow, false},
    {"SquaredDifference", BinaryKind::kSquaredDifference, false},
    {"FloorDiv", BinaryKind::kFloorDiv, false},
    {"FloorMod", BinaryKind::kFloorMod, false},
    {"Less", BinaryKind::kLess, false},
    {"LessEqual", BinaryKind::kLessEqual, false},
    {"Greater", BinaryKind::kGreater, false},
    {"GreaterEqual", BinaryKind::kGreaterEqual, false},
    {"Equal", BinaryKind::kEqual, false},
    {"NotEqual", BinaryKind::kNotEqual, false},
    {"ReluGrad", BinaryKind::kReluGrad, true},
    {"Relu6Grad", BinaryKind::kRelu6Grad, true},
    {"LeakyReluGrad", BinaryKind::kLeakyReluGrad, true},
    {"SoftplusGrad", BinaryKind::kSoftplusGrad, true},
    {"EluGrad", BinaryKind::kEluGrad, true},
    {"SeluGrad", BinaryKind::kSeluGrad, true},
    {"TanhGrad", BinaryKind::kTanhGrad, true},
    {"SigmoidGrad", BinaryKind::kSigmoidGrad, true},
    {"RsqrtGrad", BinaryKind::kRsqrtGrad, true},
    {"SqrtGrad", BinaryKind::kSqrtGrad, true},
    {"ReciprocalGrad", BinaryKind::kReciprocalGrad, true},
};

// Reads the element type of input 0 and LeakyRelu's alpha; shared by both arities.
class GpuCwiseBase : public OpKernel {
 protected:
  explicit GpuCwiseBase(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(false);
    dtype_ = BaseType(c->input_types()[0]);
    if (!gpu::ToElemType(dtype_, &elem_)) {
      c->SetStatus(errors::InvalidArgument(type_string(), " node '", name(),
                                           "': no GPU kernel for dtype ", DataTypeString(dtype_)));
    }
    if (c->HasAttr("alpha")) {
      float a = 0.2f;
      c->SetStatus(c->GetAttr("alpha", &a));
      alpha_ = a;
    }
  }

  DataType dtype_ = DT_INVALID;
  gpu::ElemType elem_ = gpu::ElemType::kFloat;
  double alpha_ = 0.2;
};

class GpuUnaryOp : public GpuCwiseBase {
 public:
  GpuUnaryOp(OpKernelConstruction* c, UnaryKind kind) : GpuCwiseBase(c), kind_(kind) {}

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, cwise::CheckInputDtypes(*this, ctx, dtype_));
    const TensorShape shape = ctx->input(0).shape();
    const void* x = ctx->input(0).raw_data();  // before forwarding may hand it to the output
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, shape, &y));
    const int64_t n = shape.num_elements();
    if (n == 0) return;
    auto gc = GpuContextOf(ctx);
    OP_REQUIRES_OK(ctx, gc.status());
    OP_REQUIRES_OK(ctx, gpu::LaunchStatus(*this, gpu::LaunchUnary(kind_, elem_, alpha_, x,
                                                                  y->raw_data(), n,
                                                                  (*gc)->compute_stream())));
  }

 private:
  const UnaryKind kind_;
};

class GpuBinaryOp : public GpuCwiseBase {
 public:
  GpuBinaryOp(OpKernelConstruction* c, BinaryKind kind, bool same_shape)
      : GpuCwiseBase(c), kind_(kind), same_shape_(same_shape),
        bool_out_(gpu::BinaryOutputsBool(kind)) {
    if (c->HasAttr("incompatible_shape_error")) {
      c->SetStatus(c->GetAttr("incompatible_shape_error", &incompatible_shape_error_));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, cwise::CheckInputDtypes(*this, ctx, dtype_));
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    const bool same = x.shape() == y.shape();
    if (same_shape_) OP_REQUIRES_OK(ctx, cwise::CheckSameShape(*this, x.shape(), 1, y.shape()));
    const bool x_scalar = !same && x.dims() == 0;
    const bool y_scalar = !same && !x_scalar && y.dims() == 0;
    const bool flat = same || x_scalar || y_scalar;
    cwise::BinaryBroadcast bc;
    if (!flat) {
      Status s = cwise::ComputeBinaryBroadcast(x.shape(), y.shape(), &bc);
      if (!s.ok() && !incompatible_shape_error_) {
        // Equal/NotEqual with incompatible_shape_error=false: a scalar false / true.
        Tensor* z = nullptr;
        OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &z));
        auto gc = GpuContextOf(ctx);
        OP_REQUIRES_OK(ctx, gc.status());
        const int value = kind_ == BinaryKind::kNotEqual ? 1 : 0;
        OP_REQUIRES_OK(ctx, CudaStatus(cudaMemsetAsync(z->raw_data(), value, 1,
                                                       (*gc)->compute_stream()),
                                       "cudaMemsetAsync"));
        return;
      }
      OP_REQUIRES_OK(ctx, s);
      OP_REQUIRES(ctx, static_cast<int>(bc.dims.size()) <= gpu::kMaxBroadcastDims,
                  errors::Unimplemented(type_string(), " node '", name(), "': broadcasting ",
                                        x.shape().DebugString(), " with ",
                                        y.shape().DebugString(), " needs ", bc.dims.size(),
                                        " collapsed dims; the GPU kernel handles ",
                                        gpu::kMaxBroadcastDims));
    }
    const TensorShape out_shape = !flat ? bc.out_shape : (x_scalar ? y.shape() : x.shape());
    const void* xp = x.raw_data();  // before forwarding may hand a buffer to the output
    const void* yp = y.raw_data();
    Tensor* z = nullptr;
    if (bool_out_) {
      OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &z));
    } else {
      OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, out_shape, &z));
    }
    const int64_t n = out_shape.num_elements();
    if (n == 0) return;
    auto gc = GpuContextOf(ctx);
    OP_REQUIRES_OK(ctx, gc.status());
    cudaStream_t stream = (*gc)->compute_stream();
    cudaError_t e;
    if (flat) {
      e = gpu::LaunchBinaryFlat(kind_, elem_, alpha_, xp, x_scalar, yp, y_scalar, z->raw_data(),
                                n, stream);
    } else {
      gpu::BroadcastIndex index;
      index.rank = static_cast<int>(bc.dims.size());
      for (int d = 0; d < index.rank; ++d) {
        index.dims[d] = bc.dims[d];
        index.x_strides[d] = bc.x_strides[d];
        index.y_strides[d] = bc.y_strides[d];
      }
      e = gpu::LaunchBinaryBroadcast(kind_, elem_, alpha_, xp, yp, z->raw_data(), index, n,
                                     stream);
    }
    OP_REQUIRES_OK(ctx, gpu::LaunchStatus(*this, e));
  }

 private:
  const BinaryKind kind_;
  const bool same_shape_;
  const bool bool_out_;
  bool incompatible_shape_error_ = true;
};

class GpuAddNOp : public GpuCwiseBase {
 public:
  explicit GpuAddNOp(OpKernelConstruction* c) : GpuCwiseBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    OP_REQUIRES(ctx, n >= 1, errors::InvalidArgument("AddN needs at least one input"));
    OP_REQUIRES_OK(ctx, cwise::CheckInputDtypes(*this, ctx, dtype_));
    const TensorShape shape = ctx->input(0).shape();
    for (int i = 1; i < n; ++i) {
      OP_REQUIRES_OK(ctx, cwise::CheckSameShape(*this, shape, i, ctx->input(i).shape()));
    }
    if (n == 1) {
      ctx->set_output(0, ctx->input(0));
      return;
    }
    std::vector<const void*> in(n);
    for (int i = 0; i < n; ++i) in[i] = ctx->input(i).raw_data();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, shape, &out));
    const int64_t total = shape.num_elements();
    if (total == 0) return;
    auto gc = GpuContextOf(ctx);
    OP_REQUIRES_OK(ctx, gc.status());
    // Up to kMaxAddNInputs per launch; later launches add the partial sum (the output) first.
    int next = 0;
    while (next < n) {
      gpu::AddNInputs batch;
      if (next > 0) batch.ptrs[batch.count++] = out->raw_data();
      while (next < n && batch.count < gpu::kMaxAddNInputs) batch.ptrs[batch.count++] = in[next++];
      OP_REQUIRES_OK(ctx, gpu::LaunchStatus(*this, gpu::LaunchAddN(elem_, batch, out->raw_data(),
                                                                   total,
                                                                   (*gc)->compute_stream())));
    }
  }
};

[[maybe_unused]] const bool kRegistered = [] {
  for (const UnaryEntry& e : kUnaryOps) {
    const UnaryKind kind = e.kind;
    gpu::RegisterGpuKernel(e.op, "T", {DT_FLOAT, DT_DOUBLE}, [kind](OpKernelConstruction* c) {
      return new GpuUnaryOp(c, kind);
    });
  }
  gpu::RegisterGpuKernel("LogicalNot", "", {}, [](OpKernelConstruction* c) {
    return new GpuUnaryOp(c, UnaryKind::kLogicalNot);
  });
  for (const BinaryEntry& e : kBinaryOps) {
    const BinaryKind kind = e.kind;
    const bool same = e.same_shape;
    gpu::RegisterGpuKernel(e.op, "T", {DT_FLOAT, DT_DOUBLE},
                           [kind, same](OpKernelConstruction* c) {
                             return new GpuBinaryOp(c, kind, same);
                           });
  }
  for (auto [op, kind] : {std::pair{"LogicalAnd", BinaryKind::kLogicalAnd},
                          std::pair{"LogicalOr", BinaryKind::kLogicalOr}}) {
    gpu::RegisterGpuKernel(op, "", {}, [kind](OpKernelConstruction* c) {
      return new GpuBinaryOp(c, kind, false);
    });
  }
  gpu::RegisterGpuKernel("AddN", "T", {DT_FLOAT, DT_DOUBLE},
                         [](OpKernelConstruction* c) { return new GpuAddNOp(c); });
  return true;
}();

}  // namespace
}  // namespace tensorflux
