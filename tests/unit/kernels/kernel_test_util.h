// A small harness for testing one kernel on its own: build a NodeDef, run the op's CPU kernel
// on a test device with given input tensors, get the outputs or the Status back.
//
//   auto out = test::KernelRunner("AddV2")
//                  .Input(test::AsTensor<float>({1, 2, 3}, {3}))
//                  .Input(test::AsTensor<float>({10}, {}))
//                  .Run();            // StatusOr<std::vector<Tensor>>
//
// Type attrs of input args (T, SrcT, N, list(type)) that are not set are inferred from the
// inputs' dtypes; set the others with Attr(). Kernel-construction errors come back from Run()
// like compute errors. The runner owns the inputs it is given: pass a tensor with std::move to
// let the kernel forward its buffer. Also: conversion of tensors to and from float64 values for
// reference checks, and running an op's shape function.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tensorflux/core/allocator.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/threadpool.h"
#include "tensorflux/core/types.h"
#include "tensorflux/framework/device_base.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace test {

// A CPU device for kernel tests: the process cpu_allocator() and, when intra_op_threads > 1,
// its own intra-op pool (so tests reach the parallel paths).
class TestCpuDevice : public DeviceBase {
 public:
  explicit TestCpuDevice(int intra_op_threads = 1) {
    if (intra_op_threads > 1)
      pool_ = std::make_unique<ThreadPool>("test_intra_op", intra_op_threads);
  }
  const std::string& name() const override { return name_; }
  const std::string& device_type() const override { return type_; }
  Allocator* GetAllocator() override { return cpu_allocator(); }
  ThreadPool* intra_op_thread_pool() override { return pool_.get(); }

 private:
  std::string name_ = "/job:localhost/replica:0/task:0/device:CPU:0";
  std::string type_ = DEVICE_CPU;
  std::unique_ptr<ThreadPool> pool_;
};

// ---------------------------------------------------------------- tensors <-> float64

// A tensor of `dtype` and `shape` from float64 values (one per element): rounded to nearest for
// half/bfloat16/float, static_cast for integers (callers pass values in range), != 0 for bool.
inline Tensor FromDoubles(DataType dtype, const TensorShape& shape,
                          const std::vector<double>& values) {
  Tensor t(dtype, shape);
  Status s = VisitPodType(dtype, "FromDoubles", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < shape.num_elements(); ++i) {
      const double v = values[static_cast<size_t>(i)];
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        p[i] = T(static_cast<float>(v));
      } else if constexpr (std::is_same_v<T, bool>) {
        p[i] = v != 0;
      } else {
        p[i] = static_cast<T>(v);
      }
    }
    return OkStatus();
  });
  return s.ok() ? t : Tensor();
}

// Every element as a double (exact for all POD types except int64/uint64 beyond 2^53).
inline std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.NumElements()));
  (void)VisitPodType(t.dtype(), "ToDoubles", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) {
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        out[i] = static_cast<float>(p[i]);
      } else {
        out[i] = static_cast<double>(p[i]);
      }
    }
    return OkStatus();
  });
  return out;
}

// A tensor from typed values: AsTensor<float>({1, 2, 3, 4}, {2, 2}).
template <typename T>
Tensor AsTensor(const std::vector<T>& values, const TensorShape& shape) {
  return Tensor::FromVector<T>(absl::Span<const T>(values), shape);
}

// The value of `dtype` nearest to v, as a double (what storing v in that dtype gives).
inline double RoundTo(DataType dtype, double v) {
  switch (dtype) {
    case DT_DOUBLE:
      return v;
    case DT_FLOAT:
      return static_cast<float>(v);
    case DT_HALF:
      return static_cast<float>(Half(static_cast<float>(v)));
    case DT_BFLOAT16:
      return static_cast<float>(BFloat16(static_cast<float>(v)));
    case DT_BOOL:
      return v != 0 ? 1 : 0;
    default: {
      double out = v;
      (void)VisitPodType(dtype, "RoundTo", [&](auto tag) {
        using T = typename decltype(tag)::type;
        // Through int64 (double -> int8 of 1024 is UB; int64 -> int8 wraps, as in C++20).
        if constexpr (std::is_integral_v<T>) {
          if (std::abs(v) < 9.2e18) out = static_cast<double>(static_cast<T>(static_cast<int64_t>(v)));
        }
        return OkStatus();
      });
      return out;
    }
  }
}

// ---------------------------------------------------------------- running a kernel

class KernelRunner {
 public:
  explicit KernelRunner(std::string op, std::string node_name = "test_node") {
    def_.set_name(std::move(node_name));
    def_.set_op(std::move(op));
  }

  template <typename V>
  KernelRunner& Attr(std::string_view name, V&& value) {
    AddNodeAttr(name, std::forward<V>(value), &def_);
    return *this;
  }
  KernelRunner& Input(Tensor t) {
    def_.add_input("input" + std::to_string(inputs_.size()));
    inputs_.push_back(std::move(t));
    return *this;
  }
  // Runs on `device` instead of a single-threaded TestCpuDevice (not owned).
  KernelRunner& OnDevice(DeviceBase* device) {
    device_ = device;
    return *this;
  }

  NodeDef* mutable_def() { return &def_; }
  // The NodeDef with inferred type attrs (after Run, or after InferTypeAttrs()).
  const NodeDef& def() const { return def_; }
  // The kernel of the last Run() (nullptr if construction failed).
  const OpKernel* kernel() const { return kernel_.get(); }
  // The inputs as the kernel left them.
  const std::vector<Tensor>& inputs() const { return inputs_; }

  // Sets the OpDef's unset type attrs (and N) of input args from the inputs' dtypes.
  Status InferTypeAttrs() {
    TX_ASSIGN_OR_RETURN(const OpDef* op_def, OpRegistry::Global()->LookUpOpDef(def_.op()));
    const int num_args = op_def->input_arg_size();
    size_t next = 0;
    for (int a = 0; a < num_args && next < inputs_.size(); ++a) {
      const OpDef::ArgDef& arg = op_def->input_arg(a);
      const size_t args_after = static_cast<size_t>(num_args - a - 1);
      const size_t remaining = inputs_.size() - next;
      size_t count = 1;
      if (!arg.number_attr().empty()) {
        if (const AttrValue* n = FindAttr(def_, arg.number_attr())) {
          count = static_cast<size_t>(n->i());
        } else {
          count = remaining > args_after ? remaining - args_after : 0;
          Attr(arg.number_attr(), static_cast<int64_t>(count));
        }
      } else if (!arg.type_list_attr().empty()) {
        if (const AttrValue* l = FindAttr(def_, arg.type_list_attr())) {
          count = static_cast<size_t>(l->list().type_size());
        } else {
          count = remaining > args_after ? remaining - args_after : 0;
          std::vector<DataType> types;
          for (size_t i = 0; i < count; ++i) types.push_back(BaseType(inputs_[next + i].dtype()));
          Attr(arg.type_list_attr(), absl::Span<const DataType>(types));
        }
      }
      if (!arg.type_attr().empty() && count > 0 && next < inputs_.size() &&
          FindAttr(def_, arg.type_attr()) == nullptr) {
        Attr(arg.type_attr(), BaseType(inputs_[next].dtype()));
      }
      next += count;
    }
    return OkStatus();
  }

  // Creates the kernel and computes once. The kernel's Status (construction or compute) on
  // failure; INTERNAL if the kernel left an output unset.
  StatusOr<std::vector<Tensor>> Run() {
    TX_RETURN_IF_ERROR(InferTypeAttrs());
    DeviceBase* device = device_ != nullptr ? device_ : &default_device_;
    kernel_.reset();
    TX_RETURN_IF_ERROR(CreateOpKernel(device, def_, &kernel_));
    OpKernelContext::Params params;
    params.step_id = 1;
    params.op_kernel = kernel_.get();
    params.device = device;
    params.inputs = inputs_.data();
    params.num_inputs = static_cast<int>(inputs_.size());
    params.cancellation_manager = &cancellation_;
    std::function<void(std::function<void()>)> runner = [](std::function<void()> fn) { fn(); };
    params.runner = &runner;
    OpKernelContext ctx(&params);
    kernel_->Compute(&ctx);
    TX_RETURN_IF_ERROR(ctx.status());
    std::vector<Tensor> outputs;
    for (int i = 0; i < ctx.num_outputs(); ++i) {
      if (!ctx.outputs()[i].IsInitialized()) {
        return errors::Internal("Kernel for op ", def_.op(), " did not set output ", i);
      }
      outputs.push_back(std::move(ctx.outputs()[i]));
    }
    return outputs;
  }

  // Runs and returns output 0.
  StatusOr<Tensor> RunOne() {
    TX_ASSIGN_OR_RETURN(std::vector<Tensor> out, Run());
    if (out.empty()) return errors::Internal("Op ", def_.op(), " has no outputs");
    return std::move(out[0]);
  }

  // Runs the op's shape function on the given input shapes (and known input values).
  StatusOr<std::vector<PartialTensorShape>> InferShapes(
      std::vector<PartialTensorShape> input_shapes, std::vector<const Tensor*> input_values = {}) {
    TX_RETURN_IF_ERROR(InferTypeAttrs());
    TX_ASSIGN_OR_RETURN(const OpRegistrationData* reg, OpRegistry::Global()->LookUp(def_.op()));
    NodeDef def = def_;
    AddDefaultsToNodeDef(reg->op_def, &def);
    DataTypeVector in_types, out_types;
    TX_RETURN_IF_ERROR(InOutTypesForNode(def, reg->op_def, &in_types, &out_types));
    InferenceContext c(def, reg->op_def, std::move(input_shapes), std::move(input_values),
                       static_cast<int>(out_types.size()));
    TX_RETURN_IF_ERROR(reg->shape_fn(&c));
    return c.outputs();
  }

 private:
  NodeDef def_;
  std::vector<Tensor> inputs_;
  DeviceBase* device_ = nullptr;
  TestCpuDevice default_device_;
  CancellationManager cancellation_;
  std::unique_ptr<OpKernel> kernel_;
};

// ---------------------------------------------------------------- expected errors

// Expects an INVALID_ARGUMENT Status whose message contains `fragment`.
inline void ExpectInvalid(const Status& s, const std::string& fragment) {
  ASSERT_FALSE(s.ok()) << "expected an error containing '" << fragment << "'";
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find(fragment), std::string::npos) << s;
}
template <typename T>
inline void ExpectInvalid(const StatusOr<T>& s, const std::string& fragment) {
  ExpectInvalid(s.status(), fragment);
}

}  // namespace test
}  // namespace tensorflux
