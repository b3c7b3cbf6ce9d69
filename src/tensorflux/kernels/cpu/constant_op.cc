// CPU kernels that make tensors from attrs or fill them: Const, Placeholder,
// PlaceholderWithDefault, Fill, ZerosLike, OnesLike.
#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/shared/const_value.h"

namespace tensorflux {
namespace {

// Const: the `value` attr is decoded once, when the kernel is built; each run hands out the same
// buffer (downstream kernels never write into it because this kernel keeps a reference).
class ConstOp : public OpKernel {
 public:
  explicit ConstOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    ctx->SetStatus(ReadConstValue(ctx, &tensor_));
  }
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, tensor_); }

 private:
  Tensor tensor_;
};
REGISTER_KERNEL_BUILDER(Name("Const").Device(DEVICE_CPU), ConstOp);

// Placeholder: reaching its kernel means the caller did not feed it.
class PlaceholderOp : public OpKernel {
 public:
  explicit PlaceholderOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    PartialTensorShape shape;
    if (ctx->HasAttr("shape")) ctx->SetStatus(ctx->GetAttr("shape", &shape));
    message_ = absl::StrCat("You must feed a value for placeholder tensor '", name(),
                            "' with dtype ", DataTypeString(ctx->output_types()[0]));
    if (!shape.unknown_rank()) absl::StrAppend(&message_, " and shape ", shape.DebugString());
  }
  void Compute(OpKernelContext* ctx) override {
    ctx->SetStatus(errors::InvalidArgument(message_));
  }

 private:
  std::string message_;
};
REGISTER_KERNEL_BUILDER(Name("Placeholder").Device(DEVICE_CPU), PlaceholderOp);

// PlaceholderWithDefault (unfed): forwards its input after checking it against `shape`.
class PlaceholderWithDefaultOp : public OpKernel {
 public:
  explicit PlaceholderWithDefaultOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    ctx->SetStatus(ctx->GetAttr("shape", &shape_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    OP_REQUIRES(ctx, shape_.IsCompatibleWith(PartialTensorShape(in.shape())),
                errors::InvalidArgument("PlaceholderWithDefault '", name(), "': input shape ",
                                        in.shape().DebugString(),
                                        " is not compatible with the shape attr ",
                                        shape_.DebugString()));
    ctx->set_output(0, ctx->release_input(0));
  }

 private:
  PartialTensorShape shape_;
};
REGISTER_KERNEL_BUILDER(Name("PlaceholderWithDefault").Device(DEVICE_CPU),
                        PlaceholderWithDefaultOp);

// Fills `n` elements of `elem_size` bytes at `dst` with the element at `value`.
void FillBytes(void* dst, const void* value, size_t elem_size, int64_t n) {
  auto fill = [&](auto tag) {
    using U = typename decltype(tag)::type;
    U v;
    std::memcpy(&v, value, sizeof(U));
    std::fill_n(static_cast<U*>(dst), n, v);
  };
  switch (elem_size) {
    case 1: fill(TypeTag<uint8_t>{}); break;
    case 2: fill(TypeTag<uint16_t>{}); break;
    case 4: fill(TypeTag<uint32_t>{}); break;
    case 8: fill(TypeTag<uint64_t>{}); break;
    default:
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(static_cast<char*>(dst) + i * elem_size, value, elem_size);
      }
  }
}

// Fill(dims, value): dims is a 1-D int32/int64 tensor of non-negative sizes, value a scalar.
class FillOp : public OpKernel {
 public:
  explicit FillOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& dims = ctx->input(0);
    const Tensor& value = ctx->input(1);
    OP_REQUIRES(ctx, dims.dims() == 1,
                errors::InvalidArgument("dims must be a vector, got shape ",
                                        dims.shape().DebugString()));
    OP_REQUIRES(ctx, value.dims() == 0,
                errors::InvalidArgument("value must be a scalar, got shape ",
                                        value.shape().DebugString()));
    std::vector<int64_t> sizes;
    if (dims.dtype() == DT_INT32) {
      for (int32_t d : dims.flat<int32_t>()) sizes.push_back(d);
    } else {
      for (int64_t d : dims.flat<int64_t>()) sizes.push_back(d);
    }
    for (int64_t d : sizes) {
      OP_REQUIRES(ctx, d >= 0,
                  errors::InvalidArgument("Fill dimensions must be >= 0, got ", d));
    }
    auto shape = TensorShape::Make(sizes);
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    if (value.dtype() == DT_STRING) {
      for (std::string& s : out->flat<std::string>()) s = value.scalar<std::string>();
      return;
    }
    const size_t size = DataTypeSize(value.dtype());
    OP_REQUIRES(ctx, size > 0,
                errors::Unimplemented("Fill does not support dtype ",
                                      DataTypeString(value.dtype())));
    FillBytes(out->raw_data(), value.raw_data(), size, out->NumElements());
  }
};
REGISTER_KERNEL_BUILDER(Name("Fill").Device(DEVICE_CPU), FillOp);

template <typename T>
T OneOf() {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(1.0f);
  } else {
    return static_cast<T>(1);
  }
}

// ZerosLike (ones = false) and OnesLike (ones = true): a new tensor shaped like x, reusing x's
// buffer when nothing else holds it.
template <bool kOnes>
class FillLikeOp : public OpKernel {
 public:
  explicit FillLikeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const DataType dt = x.dtype();
    if (dt == DT_STRING && !kOnes) {
      Tensor* out = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out));
      return;  // strings start empty
    }
    OP_REQUIRES(ctx, DataTypeSize(dt) > 0,
                errors::Unimplemented(type_string(), " does not support dtype ",
                                      DataTypeString(dt)));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &out));
    if (!kOnes) {
      if (out->NumElements() > 0) std::memset(out->raw_data(), 0, out->TotalBytes());
      return;
    }
    OP_REQUIRES_OK(ctx, VisitPodType(dt, type_string(), [&](auto tag) -> Status {
                     using T = typename decltype(tag)::type;
                     std::fill_n(out->data<T>(), out->NumElements(), OneOf<T>());
                     return OkStatus();
                   }));
  }
};
REGISTER_KERNEL_BUILDER(Name("ZerosLike").Device(DEVICE_CPU), FillLikeOp<false>);
REGISTER_KERNEL_BUILDER(Name("OnesLike").Device(DEVICE_CPU), FillLikeOp<true>);

}  // namespace
}  // namespace tensorflux
