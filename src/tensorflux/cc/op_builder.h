// internal::OpBuilder: builds one node in a Scope from its inputs and attrs. The generated op
// wrappers (tensorflux/cc/ops/ops.h) and ops::Const use it; client code normally does not.
//
// Finalize() does, in order:
//  1. names the node (Scope::GetUniqueNameForOp) and sets the scope's device;
//  2. infers attrs from the inputs given as Outputs, following the OpDef: a type attr ("x: T")
//     from the input's dtype, a number attr ("N * T") from the list length, a list(type) attr
//     from the list's dtypes. Two inputs that disagree on a type attr are INVALID_ARGUMENT
//     ("inconsistent values for attr 'T' ...");
//  3. makes a Const node "NAME/ARG" for each literal input, in the dtype the arg needs: the fixed
//     dtype of the arg, else the type attr already known (set explicitly or from an Output
//     input), else the literal's own dtype. Conversions between numeric dtypes: integers must
//     fit the target, floats going to an integer dtype must be whole and in range; float <-> float
//     and int -> float round to nearest. bool and string literals are never converted;
//  4. adds the node (attr validation and defaults happen in Graph::AddNode), its data edges, and
//     a control edge from each of the scope's control dependencies;
//  5. runs the op's shape function on the inputs' inferred shapes and constant values.
// Any failure is recorded in the Scope's status (naming the node and op) and Finalize returns
// nullptr; if the scope already holds an error, nothing is built.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensorflux/attr_value.pb.h"
#include "tensorflux/cc/ops.h"
#include "tensorflux/cc/scope.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/tensor_shape.h"

namespace tensorflux {

class Node;

namespace internal {

// The literal `t` converted to `dtype` under the rules above. INVALID_ARGUMENT naming `what`
// and the first value that does not convert.
StatusOr<Tensor> ConvertLiteral(const Tensor& t, DataType dtype, std::string_view what);

class OpBuilder {
 public:
  OpBuilder(const Scope& scope, std::string op_type);

  // One call per input arg of the OpDef, in order.
  OpBuilder& Input(const ::tensorflux::Input& input);
  OpBuilder& Input(const ::tensorflux::InputList& inputs);

  OpBuilder& Attr(std::string_view name, AttrValue value);
  OpBuilder& Attr(std::string_view name, const std::string& v);
  OpBuilder& Attr(std::string_view name, const char* v);
  OpBuilder& Attr(std::string_view name, int64_t v);
  OpBuilder& Attr(std::string_view name, float v);
  OpBuilder& Attr(std::string_view name, bool v);
  OpBuilder& Attr(std::string_view name, DataType v);
  OpBuilder& Attr(std::string_view name, const PartialTensorShape& v);
  OpBuilder& Attr(std::string_view name, const Tensor& v);
  OpBuilder& Attr(std::string_view name, const NameAttrList& v);
  OpBuilder& Attr(std::string_view name, const std::vector<std::string>& v);
  OpBuilder& Attr(std::string_view name, const std::vector<int64_t>& v);
  OpBuilder& Attr(std::string_view name, const std::vector<float>& v);
  OpBuilder& Attr(std::string_view name, const std::vector<bool>& v);
  OpBuilder& Attr(std::string_view name, const std::vector<DataType>& v);
  OpBuilder& Attr(std::string_view name, const std::vector<PartialTensorShape>& v);
  OpBuilder& Attr(std::string_view name, const std::vector<Tensor>& v);
  OpBuilder& Attr(std::string_view name, const std::vector<NameAttrList>& v);

  // Builds the node; nullptr on failure (the error is in the scope's status).
  Node* Finalize();

  // After a successful Finalize: the outputs of the output arg `arg` (one for a plain arg, the
  // whole list for a list arg). Empty when Finalize failed or `arg` is unknown.
  std::vector<Output> OutputsOf(std::string_view arg) const;
  // The first output of `arg` (an empty Output when there is none).
  Output OutputOf(std::string_view arg) const;

 private:
  struct Arg {
    bool is_list = false;
    std::vector<::tensorflux::Input> items;
  };
  Status Build(Node** out);

  Scope scope_;
  std::string op_type_;
  std::vector<Arg> args_;
  std::vector<std::pair<std::string, AttrValue>> attrs_;
  Node* node_ = nullptr;
};

// A Const node holding `value` (shape and dtype as given), named by `scope`.
Output BuildConst(const Scope& scope, const Tensor& value);

}  // namespace internal
}  // namespace tensorflux
