// OpKernel, OpKernelContext, the kernel registry and CreateOpKernel.
#include "tensorflux/framework/op_kernel.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "tensorflux/framework/op.h"

namespace tensorflux {

// ---------------------------------------------------------------- construction and kernels

OpKernelConstruction::OpKernelConstruction(DeviceBase* device, const NodeDef* def,
                                           const OpDef* op_def, DataTypeVector input_types,
                                           DataTypeVector output_types)
    : device_(device),
      def_(def),
      op_def_(op_def),
      input_types_(std::move(input_types)),
      output_types_(std::move(output_types)) {}

OpKernel::OpKernel(OpKernelConstruction* ctx)
    : def_(ctx->def()), input_types_(ctx->input_types()), output_types_(ctx->output_types()) {}

void AsyncOpKernel::Compute(OpKernelContext* ctx) {
  absl::Notification done;
  ComputeAsync(ctx, [&done] { done.Notify(); });
  done.WaitForNotification();
}

// ---------------------------------------------------------------- OpKernelContext

OpKernelContext::OpKernelContext(Params* params) : params_(params) {
  if (params_->op_kernel != nullptr) outputs_.resize(params_->op_kernel->num_outputs());
}

Allocator* OpKernelContext::allocator() const {
  if (params_->device != nullptr) {
    if (Allocator* a = params_->device->GetAllocator()) return a;
  }
  return cpu_allocator();
}

ThreadPool* OpKernelContext::intra_op_thread_pool() const {
  return params_->device != nullptr ? params_->device->intra_op_thread_pool() : nullptr;
}

namespace {
Status BadOutputIndex(const OpKernelContext& c, int i) {
  return errors::InvalidArgument("Kernel for node '", c.op_kernel().name(), "' (op ",
                                 c.op_kernel().type_string(), ") has no output ", i, "; it has ",
                                 c.op_kernel().num_outputs());
}
}  // namespace

Status OpKernelContext::allocate_output(int i, const TensorShape& shape, Tensor** out) {
  if (i < 0 || i >= num_outputs()) return BadOutputIndex(*this, i);
  StatusOr<Tensor> t = Tensor::Allocate(BaseType(expected_output_dtype(i)), shape, allocator());
  if (!t.ok()) {
    return Status(t.status().code(),
                  absl::StrCat("Allocating output ", i, " of node '", op_kernel().name(), "' (op ",
                               op_kernel().type_string(), ") with shape ", shape.DebugString(),
                               ": ", t.status().message()));
  }
  outputs_[i] = *std::move(t);
  *out = &outputs_[i];
  return OkStatus();
}

void OpKernelContext::set_output(int i, Tensor t) {
  if (i < 0 || i >= num_outputs()) {
    SetStatus(BadOutputIndex(*this, i));
    return;
  }
  // A Ref(T) output carries the DT_RESOURCE handle of the variable (framework/resource_var.h).
  const DataType want = IsRefType(expected_output_dtype(i)) ? DT_RESOURCE
                                                            : BaseType(expected_output_dtype(i));
  if (t.dtype() != want) {
    SetStatus(errors::InvalidArgument("Output ", i, " of node '", op_kernel().name(), "' (op ",
                                      op_kernel().type_string(), ") should be ",
                                      DataTypeString(expected_output_dtype(i)), " but the kernel "
                                      "set a ", DataTypeString(t.dtype()), " tensor"));
    return;
  }
  outputs_[i] = std::move(t);
}

Status OpKernelContext::allocate_temp(DataType dtype, const TensorShape& shape, Tensor* out) {
  StatusOr<Tensor> t = Tensor::Allocate(dtype, shape, allocator());
  if (!t.ok()) {
    return Status(t.status().code(),
                  absl::StrCat("Allocating a temporary of node '", op_kernel().name(), "' (op ",
                               op_kernel().type_string(), ") with shape ", shape.DebugString(),
                               ": ", t.status().message()));
  }
  *out = *std::move(t);
  return OkStatus();
}

Status OpKernelContext::forward_input_or_allocate_output(std::initializer_list<int> candidate_inputs,
                                                         int output, const TensorShape& shape,
                                                         Tensor** out) {
  if (output < 0 || output >= num_outputs()) return BadOutputIndex(*this, output);
  const DataType out_type = BaseType(expected_output_dtype(output));
  for (int i : candidate_inputs) {
    if (i < 0 || i >= num_inputs()) continue;
    if (i < op_kernel().num_inputs() && IsRefType(op_kernel().input_type(i))) continue;
    const Tensor& in = params_->inputs[i];
    if (!in.IsInitialized() || BaseType(in.dtype()) != out_type) continue;
    if (in.NumElements() != shape.num_elements() || in.TotalBytes() == 0) continue;
    if (in.raw_data() == nullptr || !in.RefCountIsOne()) continue;
    Tensor forwarded;
    if (!forwarded.CopyFrom(in, shape)) continue;
    outputs_[output] = std::move(forwarded);
    *out = &outputs_[output];
    return OkStatus();
  }
  return allocate_output(output, shape, out);
}

// ---------------------------------------------------------------- registry

KernelRegistry* KernelRegistry::Global() {
  static KernelRegistry* registry = new KernelRegistry;
  return registry;
}

void KernelRegistry::Register(const KernelDefBuilder& def, KernelFactory factory) {
  absl::MutexLock lock(&mu_);
  kernels_[def.op()].push_back(Entry{def, std::move(factory)});
}

namespace {

std::string ConstraintString(const KernelDefBuilder::Constraint& c) {
  std::vector<std::string> names;
  for (DataType dt : c.allowed) names.push_back(DataTypeString(dt));
  return absl::StrCat(c.attr, " in [", absl::StrJoin(names, ", "), "]");
}

std::string KernelLine(const KernelDefBuilder& d) {
  std::string line = absl::StrCat("device='", d.device_type(), "'");
  for (const auto& c : d.constraints()) absl::StrAppend(&line, "; ", ConstraintString(c));
  if (d.priority() != 0) absl::StrAppend(&line, "; priority=", d.priority());
  return line;
}

// The node's value for `attr`, falling back to the registered OpDef's default.
const AttrValue* AttrOrDefault(const NodeDef& n, const std::string& attr) {
  if (const AttrValue* v = FindAttr(n, attr)) return v;
  StatusOr<const OpDef*> op = OpRegistry::Global()->LookUpOpDef(n.op());
  if (!op.ok()) return nullptr;
  for (const auto& a : (*op)->attr()) {
    if (a.name() == attr && a.has_default_value()) return &a.default_value();
  }
  return nullptr;
}

bool ConstraintHolds(const NodeDef& n, const KernelDefBuilder::Constraint& c) {
  const AttrValue* v = AttrOrDefault(n, c.attr);
  if (v == nullptr) return false;
  auto allowed = [&](int t) {
    return std::find(c.allowed.begin(), c.allowed.end(), static_cast<DataType>(t)) !=
           c.allowed.end();
  };
  if (v->value_case() == AttrValue::kType) return allowed(v->type());
  if (v->value_case() == AttrValue::kList) {
    const auto& l = v->list();
    if (l.i_size() || l.f_size() || l.b_size() || l.s_size() || l.shape_size() ||
        l.tensor_size() || l.func_size()) {
      return false;
    }
    return std::all_of(l.type().begin(), l.type().end(), allowed);
  }
  return false;
}

bool Matches(const NodeDef& n, const KernelDefBuilder& def, std::string_view device_type) {
  if (def.device_type() != device_type) return false;
  for (const auto& c : def.constraints()) {
    if (!ConstraintHolds(n, c)) return false;
  }
  return true;
}

}  // namespace

StatusOr<const KernelRegistry::Entry*> KernelRegistry::FindKernel(
    const NodeDef& node_def, std::string_view device_type) const {
  absl::MutexLock lock(&mu_);
  auto it = kernels_.find(node_def.op());
  const Entry* best = nullptr;
  if (it != kernels_.end()) {
    for (const Entry& e : it->second) {
      if (!Matches(node_def, e.def, device_type)) continue;
      if (best == nullptr || e.def.priority() > best->def.priority()) best = &e;
    }
  }
  if (best != nullptr) return best;

  // NOT_FOUND: name the node's values of every constrained attr, and list what is registered.
  std::vector<std::string> attr_names;
  std::vector<std::string> registered;
  if (it != kernels_.end()) {
    for (const Entry& e : it->second) {
      registered.push_back(absl::StrCat("  ", KernelLine(e.def)));
      for (const auto& c : e.def.constraints()) {
        if (std::find(attr_names.begin(), attr_names.end(), c.attr) == attr_names.end()) {
          attr_names.push_back(c.attr);
        }
      }
    }
  }
  std::sort(attr_names.begin(), attr_names.end());
  std::vector<std::string> values;
  for (const std::string& a : attr_names) {
    const AttrValue* v = AttrOrDefault(node_def, a);
    std::string s = "<missing>";
    if (v != nullptr && v->value_case() == AttrValue::kType) {
      s = DataTypeString(v->type());
    } else if (v != nullptr && v->value_case() == AttrValue::kList) {
      std::vector<std::string> ts;
      for (int t : v->list().type()) ts.push_back(DataTypeString(static_cast<DataType>(t)));
      s = absl::StrCat("[", absl::StrJoin(ts, ", "), "]");
    } else if (v != nullptr) {
      s = SummarizeAttrValue(*v);
    }
    values.push_back(absl::StrCat(a, "=", s));
  }
  std::string msg = absl::StrCat("No registered '", node_def.op(), "' OpKernel for '",
                                 absl::string_view(device_type.data(), device_type.size()),
                                 "' devices compatible with node {{node ", node_def.name(), "}}");
  if (!values.empty()) absl::StrAppend(&msg, " (", absl::StrJoin(values, ", "), ")");
  if (registered.empty()) {
    absl::StrAppend(&msg, ". Registered:  <no registered kernels>");
  } else {
    absl::StrAppend(&msg, ". Registered:\n", absl::StrJoin(registered, "\n"));
  }
  return errors::NotFound(msg);
}

std::vector<std::string> KernelRegistry::SupportedDeviceTypes(const NodeDef& node_def) const {
  std::vector<std::string> out;
  {
    absl::MutexLock lock(&mu_);
    auto it = kernels_.find(node_def.op());
    if (it == kernels_.end()) return out;
    for (const Entry& e : it->second) {
      const std::string& dev = e.def.device_type();
      if (std::find(out.begin(), out.end(), dev) != out.end()) continue;
      if (Matches(node_def, e.def, dev)) out.push_back(dev);
    }
  }
  // GPU before CPU (placement preference), then the rest by name.
  auto rank = [](const std::string& d) { return d == DEVICE_GPU ? 0 : d == DEVICE_CPU ? 1 : 2; };
  std::sort(out.begin(), out.end(), [&](const std::string& a, const std::string& b) {
    return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
  });
  return out;
}

std::vector<std::string> KernelRegistry::ListKernels(std::string_view op) const {
  std::vector<std::string> out;
  absl::MutexLock lock(&mu_);
  const absl::string_view name(op.data(), op.size());
  auto it = kernels_.find(name);
  if (it == kernels_.end()) return out;
  for (const Entry& e : it->second) out.push_back(absl::StrCat(name, ": ", KernelLine(e.def)));
  return out;
}

// ---------------------------------------------------------------- CreateOpKernel

Status CreateOpKernel(DeviceBase* device, const NodeDef& node_def, std::unique_ptr<OpKernel>* out) {
  auto wrap = [&](const Status& s) {
    return errors::AttachNodeContext(s, node_def.name(), node_def.op());
  };
  out->reset();
  if (device == nullptr) {
    return wrap(errors::InvalidArgument("CreateOpKernel needs a device"));
  }
  StatusOr<const OpDef*> op_def = OpRegistry::Global()->LookUpOpDef(node_def.op());
  if (!op_def.ok()) return wrap(op_def.status());
  NodeDef def = node_def;
  AddDefaultsToNodeDef(**op_def, &def);
  Status s = ValidateNodeDef(def, **op_def);
  if (!s.ok()) return wrap(s);
  DataTypeVector inputs, outputs;
  s = InOutTypesForNode(def, **op_def, &inputs, &outputs);
  if (!s.ok()) return wrap(s);
  StatusOr<const KernelRegistry::Entry*> entry =
      KernelRegistry::Global()->FindKernel(def, device->device_type());
  if (!entry.ok()) return wrap(entry.status());
  OpKernelConstruction construction(device, &def, *op_def, std::move(inputs), std::move(outputs));
  std::unique_ptr<OpKernel> kernel((*entry)->factory(&construction));
  if (!construction.status().ok()) return wrap(construction.status());
  if (kernel == nullptr) {
    return wrap(errors::Internal("Kernel factory for op '", node_def.op(), "' returned null"));
  }
  *out = std::move(kernel);
  return OkStatus();
}

}  // namespace tensorflux
