#include "tensorflux/cc/training/variables.h"

#include <utility>

#include "tensorflux/cc/ops/ops.h"
#include "tensorflux/cc/training/initializers.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/graph/graph.h"

namespace tensorflux::training {
namespace {

// Position of `handle_op` in the scope's variables collection, or -1.
int IndexOf(const Scope& scope, const Node* handle_node) {
  const std::vector<Operation> vars = scope.GetCollection(kGlobalVariables);
  for (size_t i = 0; i < vars.size(); ++i) {
    if (vars[i].node() == handle_node) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

Variable::Variable(const Scope& scope, Input initial_value, const VariableOptions& options) {
  if (!scope.ok()) return;
  Output init = initial_value.output();
  Tensor literal;
  if (initial_value.is_literal()) {
    if (!initial_value.status().ok()) {
      scope.UpdateStatus(initial_value.status());
      return;
    }
    literal = initial_value.tensor();
    dtype_ = literal.dtype();
    shape_ = PartialTensorShape(literal.shape());
  } else if (init.node() == nullptr) {
    scope.UpdateStatus(errors::InvalidArgument("Variable: empty initial value"));
    return;
  } else {
    dtype_ = init.type();
    shape_ = scope.GetInferredShape(init);
  }
  if (!options.validate_shape) shape_ = PartialTensorShape();
  // The handle takes the scope's (unique) name; its helper nodes go under "<name>/".
  const std::string name = scope.GetUniqueNameForOp("Variable");
  handle_ = ops::VarHandleOp(scope.WithExactName(name), dtype_, shape_,
                             ops::VarHandleOp::SharedName(name));
  if (handle_.node() == nullptr) return;
  const Scope inner = scope.NewSubScopeExact(name).WithNoControlDependencies();
  if (initial_value.is_literal()) {
    init = ops::Const(inner.WithOpName("initial_value"), Input::Initializer(literal));
  }
  initializer_ = ops::AssignVariableOp(inner.WithOpName("Assign"), handle_, init,
                                       ops::AssignVariableOp::ValidateShape(
                                           options.validate_shape))
                     .operation;
  if (!scope.ok()) return;
  scope.AddToCollection(kGlobalVariables, handle_.op());
  scope.AddToCollection(kVariableInitializers, initializer_);
  if (options.trainable) scope.AddToCollection(kTrainableVariables, handle_.op());
}

Variable Variable::FromHandle(const Scope& scope, const Operation& handle_op) {
  Variable v;
  if (handle_op.node() == nullptr) return v;
  v.handle_ = Output(handle_op, 0);
  const NodeDef& def = handle_op.node()->def();
  if (!GetNodeAttr(def, "dtype", &v.dtype_).ok()) v.dtype_ = DT_INVALID;
  if (!GetNodeAttr(def, "shape", &v.shape_).ok()) v.shape_ = PartialTensorShape();
  const int i = IndexOf(scope, handle_op.node());
  const std::vector<Operation> inits = scope.GetCollection(kVariableInitializers);
  if (i >= 0 && i < static_cast<int>(inits.size())) v.initializer_ = inits[i];
  return v;
}

Output Variable::Read(const Scope& scope) const {
  Output value = ops::ReadVariableOp(scope, handle_, dtype_);
  scope.RefineInferredShape(value, shape_);
  return value;
}
Operation Variable::Assign(const Scope& scope, Input value) const {
  return ops::AssignVariableOp(scope, handle_, std::move(value)).operation;
}
Operation Variable::AssignAdd(const Scope& scope, Input value) const {
  return ops::AssignAddVariableOp(scope, handle_, std::move(value)).operation;
}
Operation Variable::AssignSub(const Scope& scope, Input value) const {
  return ops::AssignSubVariableOp(scope, handle_, std::move(value)).operation;
}

namespace {
std::vector<Variable> FromCollection(const Scope& scope, const char* key) {
  std::vector<Variable> out;
  for (const Operation& op : scope.GetCollection(key)) out.push_back(Variable::FromHandle(scope, op));
  return out;
}
}  // namespace

std::vector<Variable> GlobalVariables(const Scope& scope) {
  return FromCollection(scope, kGlobalVariables);
}
std::vector<Variable> TrainableVariables(const Scope& scope) {
  return FromCollection(scope, kTrainableVariables);
}

Operation VariablesInitializer(const Scope& scope, const std::vector<Variable>& vars) {
  std::vector<Operation> inits;
  for (const Variable& v : vars) {
    if (v.initializer().node() != nullptr) inits.push_back(v.initializer());
  }
  return ops::NoOp(scope.WithOpName("init").WithControlDependencies(inits)).operation;
}

Operation GlobalVariablesInitializer(const Scope& scope) {
  return VariablesInitializer(scope, GlobalVariables(scope));
}

StatusOr<Variable> GetVariable(const Scope& scope, const std::string& name,
                               const TensorShape& shape, const GetVariableOptions& options) {
  TX_RETURN_IF_ERROR(scope.status());
  const std::string full =
      scope.name_prefix().empty() ? name : scope.name_prefix() + "/" + name;
  for (const Variable& v : GlobalVariables(scope)) {
    if (v.name() != full) continue;
    if (options.reuse == Reuse::kNo) {
      Status s = errors::InvalidArgument("Variable ", full,
                                         " already exists, disallowed. Did you mean to set "
                                         "reuse=true or reuse=kAuto?");
      scope.UpdateStatus(s);
      return s;
    }
    if (v.dtype() != options.dtype || !v.shape().IsCompatibleWith(PartialTensorShape(shape))) {
      Status s = errors::InvalidArgument(
          "Trying to share variable ", full, ", but specified shape ", shape.DebugString(),
          " and dtype ", DataTypeString(options.dtype), " and found shape ",
          v.shape().DebugString(), " and dtype ", DataTypeString(v.dtype()));
      scope.UpdateStatus(s);
      return s;
    }
    return v;
  }
  if (options.reuse == Reuse::kYes) {
    Status s = errors::NotFound("Variable ", full,
                                " does not exist, or was not created with GetVariable(). Did "
                                "you mean to set reuse=kAuto?");
    scope.UpdateStatus(s);
    return s;
  }
  Initializer init = options.initializer;
  if (!init) init = DataTypeIsFloating(options.dtype) ? GlorotUniform() : Zeros();
  const Scope var_scope = scope.WithOpName(name);
  const Scope init_scope = scope.NewSubScope(name + "/Initializer");
  Variable v(var_scope, init(init_scope, shape, options.dtype),
             VariableOptions{options.trainable, true});
  TX_RETURN_IF_ERROR(scope.status());
  if (v.name() != full) {
    return errors::Internal("GetVariable: ", full, " was created as ", v.name());
  }
  if (options.regularizer) {
    Output loss = options.regularizer(scope.NewSubScope(name + "/Regularizer"), v.Read(scope));
    if (loss.node() != nullptr) scope.AddToCollection(kRegularizationLosses, loss.op());
  }
  return v;
}

}  // namespace tensorflux::training
