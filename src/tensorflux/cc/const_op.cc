#include "tensorflux/cc/const_op.h"

#include "tensorflux/cc/op_builder.h"

namespace tensorflux {
namespace ops {

Output Const(const Scope& scope, const Input::Initializer& value) {
  if (!scope.ok()) return Output();
  if (!value.status.ok()) {
    scope.UpdateStatus(errors::InvalidArgument("Const: ", value.status.message()));
    return Output();
  }
  return internal::BuildConst(scope, value.tensor);
}

Output Const(const Scope& scope, const Input::Initializer& value, DataType dtype) {
  if (!scope.ok()) return Output();
  if (!value.status.ok()) {
    scope.UpdateStatus(errors::InvalidArgument("Const: ", value.status.message()));
    return Output();
  }
  auto t = internal::ConvertLiteral(value.tensor, dtype, "Const");
  if (!t.ok()) {
    scope.UpdateStatus(t.status());
    return Output();
  }
  return internal::BuildConst(scope, *t);
}

}  // namespace ops
}  // namespace tensorflux
