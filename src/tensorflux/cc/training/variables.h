// Resource variables for graphs built with a Scope: the C++ form of TF 1.x's tf.Variable
// (use_resource=True), tf.get_variable and tf.global_variables_initializer.
//
//   Scope root = Scope::NewRootScope();
//   training::Variable w(root.WithOpName("w"), training::GlorotUniform(1)({784, 256}, ...));
//   auto y = ops::MatMul(root, x, w.Read(root));
//   ClientSession session(root);
//   session.Run({}, {}, {training::GlobalVariablesInitializer(root)}, nullptr);
//
// A Variable is a VarHandleOp node (its name is the variable's name; the handle lives in the
// session's ResourceMgr for the session's lifetime), an initializer (AssignVariableOp of the
// initial value, node "<name>/Assign") and a ReadVariableOp per Read(). Every variable is added to
// the scope's "variables" collection and, when trainable, to "trainable_variables"; reading one
// before its initializer ran fails at run time with FAILED_PRECONDITION naming it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tensorflux/cc/ops.h"
#include "tensorflux/cc/scope.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor_shape.h"

namespace tensorflux::training {

// Collection names (TF's GraphKeys.GLOBAL_VARIABLES / TRAINABLE_VARIABLES; the initializers are
// kept at the same positions as the variables).
inline constexpr char kGlobalVariables[] = "variables";
inline constexpr char kTrainableVariables[] = "trainable_variables";
inline constexpr char kVariableInitializers[] = "variable_initializers";
inline constexpr char kRegularizationLosses[] = "regularization_losses";
inline constexpr char kUpdateOps[] = "update_ops";

struct VariableOptions {
  bool trainable = true;
  // false: the variable's declared shape is unknown and assignments may change it.
  bool validate_shape = true;
};

class Variable {
 public:
  Variable() = default;
  // A variable named by `scope` (WithOpName, default "Variable"), holding `initial_value`'s
  // dtype and static shape. The initial value is computed when the initializer runs. Errors
  // (an empty initial value, an unknown dtype) are recorded in the scope's status.
  Variable(const Scope& scope, Input initial_value, const VariableOptions& options = {});

  // The variable whose VarHandleOp node is `handle_op`, with the initializer recorded for it in
  // the scope's collections (an empty Operation when it has none).
  static Variable FromHandle(const Scope& scope, const Operation& handle_op);

  bool valid() const { return handle_.node() != nullptr; }
  // The VarHandleOp's node name, e.g. "dense/kernel".
  std::string name() const { return handle_.op().name(); }
  Output handle() const { return handle_; }
  Operation initializer() const { return initializer_; }
  DataType dtype() const { return dtype_; }
  const PartialTensorShape& shape() const { return shape_; }

  // A new ReadVariableOp: the variable's value when that node runs (a snapshot: later updates do
  // not change it).
  Output Read(const Scope& scope) const;
  // AssignVariableOp / AssignAddVariableOp / AssignSubVariableOp of `value` (same dtype; same
  // shape unless validate_shape was false, else INVALID_ARGUMENT at run time).
  Operation Assign(const Scope& scope, Input value) const;
  Operation AssignAdd(const Scope& scope, Input value) const;
  Operation AssignSub(const Scope& scope, Input value) const;

 private:
  Output handle_;
  Operation initializer_;
  DataType dtype_ = DT_INVALID;
  PartialTensorShape shape_;
};

// The variables of the scope's graph, in creation order.
std::vector<Variable> GlobalVariables(const Scope& scope);
std::vector<Variable> TrainableVariables(const Scope& scope);
// One NoOp "init" (made unique: "init_1", ...) depending on the initializers of `vars` (TF's
// variables_initializer).
Operation VariablesInitializer(const Scope& scope, const std::vector<Variable>& vars);
Operation GlobalVariablesInitializer(const Scope& scope);

// Makes the initial value of a variable of `shape` and `dtype` (see initializers.h).
using Initializer = std::function<Output(const Scope& scope, const TensorShape& shape,
                                         DataType dtype)>;
// Makes a scalar loss from a variable's value (see regularizers in layers.h), or an empty Output.
using Regularizer = std::function<Output(const Scope& scope, const Output& value)>;

enum class Reuse { kNo, kYes, kAuto };

struct GetVariableOptions {
  DataType dtype = DT_FLOAT;
  Initializer initializer;  // empty: GlorotUniform for floating types, Zeros otherwise (as TF)
  Regularizer regularizer;  // its loss goes to the "regularization_losses" collection
  bool trainable = true;
  Reuse reuse = Reuse::kNo;
};

// tf.get_variable: the variable "<scope prefix>/<name>" of `shape`. With reuse kNo a variable of
// that name must not exist yet (INVALID_ARGUMENT "Variable X already exists"); with kYes it must
// exist (NOT_FOUND "Variable X does not exist") and have this shape and dtype (INVALID_ARGUMENT);
// kAuto creates it when missing. Errors are returned and recorded in the scope.
StatusOr<Variable> GetVariable(const Scope& scope, const std::string& name,
                               const TensorShape& shape, const GetVariableOptions& options = {});

}  // namespace tensorflux::training
