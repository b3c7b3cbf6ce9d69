// OpKernel, the context it computes in, and the kernel registry.
//
// A kernel is built once per node (OpKernelConstruction: read and validate attrs there, not in
// Compute) and computes many times. Compute() validates its inputs and reports errors with
// OP_REQUIRES / OP_REQUIRES_OK (TF's pattern): the context records the Status and the kernel
// returns early; the executor then stops the step and reports the error with the node's name and
// op. Kernels are registered per (op, device type, type constraints):
//
//   REGISTER_KERNEL_BUILDER(Name("MatMul").Device(DEVICE_CPU).TypeConstraint<float>("T"),
//                           MatMulOp<float>);
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/types.h"
#include "tensorflux/framework/call_frame.h"
#include "tensorflux/framework/cancellation.h"
#include "tensorflux/framework/device_base.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/node_def.pb.h"
#include "tensorflux/op_def.pb.h"

namespace tensorflux {

class OpKernelContext;
class Rendezvous;

class OpKernelConstruction {
 public:
  OpKernelConstruction(DeviceBase* device, const NodeDef* def, const OpDef* op_def,
                       DataTypeVector input_types, DataTypeVector output_types);

  const NodeDef& def() const { return *def_; }
  const OpDef& op_def() const { return *op_def_; }
  DeviceBase* device() const { return device_; }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  const DataTypeVector& input_types() const { return input_types_; }
  const DataTypeVector& output_types() const { return output_types_; }

  template <typename T>
  Status GetAttr(std::string_view name, T* value) const {
    return GetNodeAttr(*def_, name, value);
  }
  bool HasAttr(std::string_view name) const { return FindAttr(*def_, name) != nullptr; }

  void SetStatus(const Status& s) {
    if (status_.ok()) status_ = s;
  }
  const Status& status() const { return status_; }

 private:
  DeviceBase* device_;
  const NodeDef* def_;
  const OpDef* op_def_;
  DataTypeVector input_types_;
  DataTypeVector output_types_;
  Status status_;
};

class OpKernel {
 public:
  explicit OpKernel(OpKernelConstruction* ctx);
  virtual ~OpKernel() = default;
  OpKernel(const OpKernel&) = delete;
  OpKernel& operator=(const OpKernel&) = delete;

  virtual void Compute(OpKernelContext* ctx) = 0;
  // Cheap kernels (false) run inline on the scheduling thread; expensive ones go to the pool.
  virtual bool IsExpensive() const { return expensive_; }
  virtual bool IsAsync() const { return false; }

  const NodeDef& def() const { return def_; }
  const std::string& name() const { return def_.name(); }
  const std::string& type_string() const { return def_.op(); }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  DataType input_type(int i) const { return input_types_[i]; }
  DataType output_type(int i) const { return output_types_[i]; }
  const DataTypeVector& input_types() const { return input_types_; }
  const DataTypeVector& output_types() const { return output_types_; }

 protected:
  // Kernels that are always cheap (Identity, Const, Shape, NoOp...) call this in their constructor.
  void set_expensive(bool e) { expensive_ = e; }

 private:
  const NodeDef def_;
  DataTypeVector input_types_;
  DataTypeVector output_types_;
  bool expensive_ = true;
};

// A kernel that finishes later (Recv, queue and iterator ops): it must call `done` exactly once.
class AsyncOpKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  using DoneCallback = std::function<void()>;
  virtual void ComputeAsync(OpKernelContext* ctx, DoneCallback done) = 0;
  bool IsAsync() const final { return true; }
  // Blocks the calling thread until ComputeAsync's done runs.
  void Compute(OpKernelContext* ctx) final;
};

class OpKernelContext {
 public:
  struct Params {
    int64_t step_id = 0;
    OpKernel* op_kernel = nullptr;
    DeviceBase* device = nullptr;
    // The node's inputs. The executor moves an input here when this node is its last consumer,
    // so a kernel may reuse that buffer for an output (forwarding) when RefCountIsOne().
    Tensor* inputs = nullptr;
    int num_inputs = 0;
    CallFrameInterface* call_frame = nullptr;
    CancellationManager* cancellation_manager = nullptr;
    Rendezvous* rendezvous = nullptr;
    // Runs closures on the inter-op pool (for async kernels that must not block).
    std::function<void(std::function<void()>)>* runner = nullptr;
  };

  explicit OpKernelContext(Params* params);

  const OpKernel& op_kernel() const { return *params_->op_kernel; }
  int64_t step_id() const { return params_->step_id; }
  DeviceBase* device() const { return params_->device; }
  Allocator* allocator() const;
  ThreadPool* intra_op_thread_pool() const;
  CallFrameInterface* call_frame() const { return params_->call_frame; }
  CancellationManager* cancellation_manager() const { return params_->cancellation_manager; }
  Rendezvous* rendezvous() const { return params_->rendezvous; }
  std::function<void(std::function<void()>)>* runner() const { return params_->runner; }

  int num_inputs() const { return params_->num_inputs; }
  const Tensor& input(int i) const { return params_->inputs[i]; }
  // Moves input i out of the context (for ops that forward an input unchanged, like Identity).
  Tensor release_input(int i) { return std::move(params_->inputs[i]); }
  DataType input_dtype(int i) const { return op_kernel().input_type(i); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  DataType expected_output_dtype(int i) const { return op_kernel().output_type(i); }

  // Allocates output i with the kernel's declared dtype. RESOURCE_EXHAUSTED when out of memory.
  Status allocate_output(int i, const TensorShape& shape, Tensor** out);
  // Sets output i. INVALID_ARGUMENT when the dtype differs from the declared one.
  void set_output(int i, Tensor t);
  // Scratch space released when the kernel returns.
  Status allocate_temp(DataType dtype, const TensorShape& shape, Tensor* out);
  // Reuses the buffer of the first candidate input that has the output's dtype and element count
  // and no other holder; allocates otherwise.
  Status forward_input_or_allocate_output(std::initializer_list<int> candidate_inputs, int output,
                                          const TensorShape& shape, Tensor** out);

  Tensor* mutable_output(int i) { return &outputs_[i]; }
  // Moves the outputs out (the executor calls this after Compute).
  absl::InlinedVector<Tensor, 4>& outputs() { return outputs_; }

  void SetStatus(const Status& s) {
    if (status_.ok() && !s.ok()) status_ = s;
  }
  const Status& status() const { return status_; }

 private:
  Params* params_;
  absl::InlinedVector<Tensor, 4> outputs_;
  Status status_;
};

// ---------------------------------------------------------------- registry

class KernelDefBuilder {
 public:
  explicit KernelDefBuilder(std::string op) : op_(std::move(op)) {}
  KernelDefBuilder& Device(std::string device_type) {
    device_type_ = std::move(device_type);
    return *this;
  }
  template <typename T>
  KernelDefBuilder& TypeConstraint(std::string attr) {
    return TypeConstraint(std::move(attr), DataTypeToEnum<T>::value);
  }
  KernelDefBuilder& TypeConstraint(std::string attr, DataType dt) {
    constraints_.push_back({std::move(attr), {dt}});
    return *this;
  }
  KernelDefBuilder& TypeConstraint(std::string attr, std::vector<DataType> allowed) {
    constraints_.push_back({std::move(attr), std::move(allowed)});
    return *this;
  }
  // Input or output that this (non-CPU) kernel keeps in host memory (shapes, indices).
  KernelDefBuilder& HostMemory(std::string arg) {
    host_memory_.push_back(std::move(arg));
    return *this;
  }
  // Higher wins when several kernels match.
  KernelDefBuilder& Priority(int p) {
    priority_ = p;
    return *this;
  }

  struct Constraint {
    std::string attr;
    std::vector<DataType> allowed;
  };
  const std::string& op() const { return op_; }
  const std::string& device_type() const { return device_type_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }
  const std::vector<std::string>& host_memory() const { return host_memory_; }
  int priority() const { return priority_; }

 private:
  std::string op_;
  std::string device_type_ = DEVICE_CPU;
  std::vector<Constraint> constraints_;
  std::vector<std::string> host_memory_;
  int priority_ = 0;
};
using Name = KernelDefBuilder;

using KernelFactory = std::function<OpKernel*(OpKernelConstruction*)>;

class KernelRegistry {
 public:
  static KernelRegistry* Global();
  void Register(const KernelDefBuilder& def, KernelFactory factory);

  struct Entry {
    KernelDefBuilder def;
    KernelFactory factory;
  };
  // The best-priority kernel for the node (attrs with defaults filled) on `device_type`.
  // NOT_FOUND listing the registered kernels for the op when none matches, e.g.
  // "No registered 'MatMul' OpKernel for 'CPU' devices compatible with node {{node m}} (T=string)".
  StatusOr<const Entry*> FindKernel(const NodeDef& node_def, std::string_view device_type) const;
  // Device types that have a kernel for the node.
  std::vector<std::string> SupportedDeviceTypes(const NodeDef& node_def) const;
  // Registered (op, device, constraints) lines, for `tensorflux inspect --kernels` and errors.
  std::vector<std::string> ListKernels(std::string_view op) const;

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::vector<Entry>> kernels_;  // by op name
};

// Looks up the OpDef and kernel, validates the NodeDef (with defaults added), computes types and
// constructs the kernel. Errors name the node and op.
Status CreateOpKernel(DeviceBase* device, const NodeDef& node_def, std::unique_ptr<OpKernel>* out);

namespace kernel_factory {
struct KernelRegistrar {
  KernelRegistrar(const KernelDefBuilder& def, KernelFactory factory) {
    KernelRegistry::Global()->Register(def, std::move(factory));
  }
};
}  // namespace kernel_factory

}  // namespace tensorflux

#define REGISTER_KERNEL_BUILDER(kernel_builder, ...) \
  REGISTER_KERNEL_BUILDER_UNIQ_HELPER(__COUNTER__, kernel_builder, __VA_ARGS__)
#define REGISTER_KERNEL_BUILDER_UNIQ_HELPER(ctr, kernel_builder, ...) \
  REGISTER_KERNEL_BUILDER_UNIQ(ctr, kernel_builder, __VA_ARGS__)
#define REGISTER_KERNEL_BUILDER_UNIQ(ctr, kernel_builder, ...)                              \
  static ::tensorflux::kernel_factory::KernelRegistrar registrar__body__##ctr##__object     \
      [[maybe_unused]](::tensorflux::KernelDefBuilder(kernel_builder),                     \
                       [](::tensorflux::OpKernelConstruction* c) -> ::tensorflux::OpKernel* { \
                         return new __VA_ARGS__(c);                                         \
                       })

#define OP_REQUIRES(CTX, EXP, STATUS)   \
  do {                                  \
    if (!(EXP)) {                       \
      (CTX)->SetStatus(STATUS);         \
      return;                           \
    }                                   \
  } while (0)

#define OP_REQUIRES_OK(CTX, ...)                       \
  do {                                                 \
    ::tensorflux::Status _s(__VA_ARGS__);              \
    if (!_s.ok()) {                                    \
      (CTX)->SetStatus(_s);                            \
      return;                                          \
    }                                                  \
  } while (0)

#define OP_REQUIRES_ASYNC(CTX, EXP, STATUS, CALLBACK) \
  do {                                                \
    if (!(EXP)) {                                     \
      (CTX)->SetStatus(STATUS);                       \
      (CALLBACK)();                                   \
      return;                                         \
    }                                                 \
  } while (0)

#define OP_REQUIRES_OK_ASYNC(CTX, STATUS, CALLBACK) \
  do {                                              \
    ::tensorflux::Status _s(STATUS);                \
    if (!_s.ok()) {                                 \
      (CTX)->SetStatus(_s);                         \
      (CALLBACK)();                                 \
      return;                                       \
    }                                               \
  } while (0)
