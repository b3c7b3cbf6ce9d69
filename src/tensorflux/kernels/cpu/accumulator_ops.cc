// ConditionalAccumulator and its ops, ref and resource forms (definitions and semantics:
// ops/data_flow_ops.cc; TF's ConditionalAccumulator for dense gradients). The accumulator is a
// BlockingResource (kernels/cpu/blocking_resource.h) with one attempt list, the takes: a take
// waits as a queued attempt until num_required gradients have arrived, and ends with CANCELLED
// when its step is cancelled or aborted.
//
// Sums are kept in double for the floating dtypes (half, bfloat16, float, double) and in int64
// for int32/int64; the mean divides by the count in that type (integer division for integers,
// as TF's) and rounds to the dtype once.
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/framework/resource_mgr.h"
#include "tensorflux/kernels/cpu/blocking_resource.h"

namespace tensorflux {
namespace {

using Progress = BlockingResource::Progress;

class ConditionalAccumulator : public BlockingResource {
 public:
  static constexpr const char* kTypeName = "ConditionalAccumulator";

  ConditionalAccumulator(DataType dtype, PartialTensorShape shape, bool mean, std::string name)
      : BlockingResource(1), dtype_(dtype), shape_(std::move(shape)), mean_(mean),
        name_(std::move(name)) {}

  std::string DebugString() const override {
    return absl::StrCat("ConditionalAccumulator '", name_, "'");
  }
  DataType dtype() const { return dtype_; }

  Status MatchesSpec(DataType dtype, const PartialTensorShape& shape, bool mean) const {
    if (dtype != dtype_ || !(shape == shape_) || mean != mean_) {
      return errors::InvalidArgument(
          "Shared accumulator '", name_, "' has dtype ", DataTypeString(dtype_), ", shape ",
          shape_.DebugString(), " and reduction ", mean_ ? "MEAN" : "SUM",
          "; this node asks for dtype ", DataTypeString(dtype), ", shape ", shape.DebugString(),
          " and reduction ", mean ? "MEAN" : "SUM");
    }
    return OkStatus();
  }

  // Adds `grad` unless local_step is older than the global step. INVALID_ARGUMENT for a shape
  // incompatible with the declared one or different from the gradients already summed.
  Status Apply(int64_t local_step, const Tensor& grad) {
    std::vector<Attempt> finished;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!shape_.IsCompatibleWith(PartialTensorShape(grad.shape()))) {
        return errors::InvalidArgument("Shape mismatch: expected ", shape_.DebugString(),
                                       ", got ", grad.shape().DebugString());
      }
      if (counter_ > 0 && grad.shape() != sum_shape_) {
        return errors::InvalidArgument("Shape mismatch: expected ", sum_shape_.DebugString(),
                                       " (the gradients already accumulated), got ",
                                       grad.shape().DebugString());
      }
      if (local_step < global_step_) return OkStatus();  // stale: dropped, as TF
      if (counter_ == 0) {
        sum_shape_ = grad.shape();
        fsum_.assign(static_cast<size_t>(grad.NumElements()), 0.0);
        isum_.assign(static_cast<size_t>(grad.NumElements()), 0);
      }
      TX_RETURN_IF_ERROR(VisitPodType(dtype_, "ConditionalAccumulator", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* g = grad.data<T>();
        for (size_t i = 0; i < fsum_.size(); ++i) {
          if constexpr (std::is_integral_v<T>) {
            isum_[i] += static_cast<int64_t>(g[i]);
          } else if constexpr (std::is_same_v<T, double>) {
            fsum_[i] += g[i];
          } else {
            fsum_[i] += static_cast<double>(static_cast<float>(g[i]));
          }
        }
        return OkStatus();
      }));
      ++counter_;
      FlushLocked(&finished);
    }
    Complete(&finished);
    return OkStatus();
  }

  void Take(OpKernelContext* ctx, int32_t num_required, AsyncOpKernel::DoneCallback done) {
    Run(ctx, std::move(done), 0, [this, num_required](OpKernelContext* c) {
      if (counter_ < num_required) return Progress::kBlocked;
      Tensor* out = nullptr;
      Status s = c->allocate_output(0, sum_shape_, &out);
      if (s.ok()) {
        s = VisitPodType(dtype_, "ConditionalAccumulator", [&](auto tag) {
          using T = typename decltype(tag)::type;
          T* o = out->data<T>();
          for (size_t i = 0; i < fsum_.size(); ++i) {
            if constexpr (std::is_integral_v<T>) {
              o[i] = static_cast<T>(mean_ ? isum_[i] / counter_ : isum_[i]);
            } else {
              const double v = mean_ ? fsum_[i] / counter_ : fsum_[i];
              if constexpr (std::is_same_v<T, double>) {
                o[i] = v;
              } else {
                o[i] = T(static_cast<float>(v));
              }
            }
          }
          return OkStatus();
        });
      }
      if (!s.ok()) {
        c->SetStatus(s);
        return Progress::kFinished;
      }
      counter_ = 0;
      ++global_step_;
      return Progress::kFinished;
    });
  }

  int32_t NumAccumulated() {
    std::lock_guard<std::mutex> l(mu_);
    return counter_;
  }

  // TF logs a warning when the step goes back and sets it anyway; so does this (silently).
  void SetGlobalStep(int64_t step) {
    std::lock_guard<std::mutex> l(mu_);
    global_step_ = step;
  }

 private:
  const DataType dtype_;
  const PartialTensorShape shape_;
  const bool mean_;
  const std::string name_;
  int64_t global_step_ = 0;
  int32_t counter_ = 0;
  TensorShape sum_shape_;
  std::vector<double> fsum_;   // floating dtypes
  std::vector<int64_t> isum_;  // integer dtypes
};

StatusOr<std::shared_ptr<ConditionalAccumulator>> GetAccumulator(OpKernelContext* ctx,
                                                                 DataType expected) {
  TX_ASSIGN_OR_RETURN(HandleInput in, ResolveHandleInput(ctx, 0));
  TX_ASSIGN_OR_RETURN(auto acc, in.mgr->Lookup<ConditionalAccumulator>(in.handle->container,
                                                                       in.handle->name));
  if (expected != DT_INVALID && acc->dtype() != expected) {
    return errors::InvalidArgument(acc->DebugString(), " holds ", DataTypeString(acc->dtype()),
                                   " gradients, this op's dtype is ", DataTypeString(expected));
  }
  return acc;
}

// Input i as an int scalar of type T: INVALID_ARGUMENT naming it otherwise.
template <typename T>
StatusOr<T> ScalarInput(OpKernelContext* ctx, int i, const char* what) {
  const Tensor& t = ctx->input(i);
  if (t.dims() != 0) {
    return errors::InvalidArgument(what, " must be a scalar, got shape ", t.shape().DebugString());
  }
  return t.scalar<T>();
}

class ConditionalAccumulatorOp : public OpKernel {
 public:
  explicit ConditionalAccumulatorOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    std::string reduction;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shape", &shape_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("container", &container_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shared_name", &name_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("reduction_type", &reduction));
    if (name_.empty()) name_ = ctx->def().name();
    mean_ = reduction == "MEAN";
  }

  void Compute(OpKernelContext* ctx) override {
    CreateResourceAndOutputHandle<ConditionalAccumulator>(
        ctx, container_, name_,
        [this](const std::string& name) {
          return std::make_shared<ConditionalAccumulator>(dtype_, shape_, mean_, name);
        },
        [this](const ConditionalAccumulator& a) { return a.MatchesSpec(dtype_, shape_, mean_); });
  }

 private:
  DataType dtype_ = DT_INVALID;
  PartialTensorShape shape_;
  bool mean_ = true;
  std::string container_, name_;
};

class ApplyGradientOp : public OpKernel {
 public:
  explicit ApplyGradientOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
  }
  void Compute(OpKernelContext* ctx) override {
    auto acc = GetAccumulator(ctx, dtype_);
    OP_REQUIRES_OK(ctx, acc.status());
    auto local_step = ScalarInput<int64_t>(ctx, 1, "local_step");
    OP_REQUIRES_OK(ctx, local_step.status());
    OP_REQUIRES_OK(ctx, (*acc)->Apply(*local_step, ctx->input(2)));
  }

 private:
  DataType dtype_ = DT_INVALID;
};

class TakeGradientOp : public AsyncOpKernel {
 public:
  explicit TakeGradientOp(OpKernelConstruction* ctx) : AsyncOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
  }
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    auto acc = GetAccumulator(ctx, dtype_);
    OP_REQUIRES_OK_ASYNC(ctx, acc.status(), done);
    auto num_required = ScalarInput<int32_t>(ctx, 1, "num_required");
    OP_REQUIRES_OK_ASYNC(ctx, num_required.status(), done);
    OP_REQUIRES_ASYNC(ctx, *num_required >= 1,
                      errors::InvalidArgument("Argument num_required must be positive, but was ",
                                              *num_required),
                      done);
    (*acc)->Take(ctx, *num_required, std::move(done));
  }

 private:
  DataType dtype_ = DT_INVALID;
};

class NumAccumulatedOp : public OpKernel {
 public:
  explicit NumAccumulatedOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    auto acc = GetAccumulator(ctx, DT_INVALID);
    OP_REQUIRES_OK(ctx, acc.status());
    ctx->set_output(0, Tensor::Scalar<int32_t>((*acc)->NumAccumulated()));
  }
};

class SetGlobalStepOp : public OpKernel {
 public:
  explicit SetGlobalStepOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    auto acc = GetAccumulator(ctx, DT_INVALID);
    OP_REQUIRES_OK(ctx, acc.status());
    auto step = ScalarInput<int64_t>(ctx, 1, "new_global_step");
    OP_REQUIRES_OK(ctx, step.status());
    (*acc)->SetGlobalStep(*step);
  }
};

#define REGISTER_ACCUMULATOR_KERNELS(prefix)                                                 \
  REGISTER_KERNEL_BUILDER(Name(prefix "ConditionalAccumulator").Device(DEVICE_CPU),           \
                          ConditionalAccumulatorOp);                                         \
  REGISTER_KERNEL_BUILDER(Name(prefix "AccumulatorApplyGradient").Device(DEVICE_CPU),         \
                          ApplyGradientOp);                                                  \
  REGISTER_KERNEL_BUILDER(Name(prefix "AccumulatorTakeGradient").Device(DEVICE_CPU),          \
                          TakeGradientOp);                                                   \
  REGISTER_KERNEL_BUILDER(Name(prefix "AccumulatorNumAccumulated").Device(DEVICE_CPU),        \
                          NumAccumulatedOp);                                                 \
  REGISTER_KERNEL_BUILDER(Name(prefix "AccumulatorSetGlobalStep").Device(DEVICE_CPU),         \
                          SetGlobalStepOp)

REGISTER_ACCUMULATOR_KERNELS("");
REGISTER_ACCUMULATOR_KERNELS("Resource");

}  // namespace
}  // namespace tensorflux
