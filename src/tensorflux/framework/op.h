// The op registry. An op is registered once with its signature in TensorFlow's spec syntax and
// its shape function:
//
//   REGISTER_OP("MatMul")
//       .Input("a: T")
//       .Input("b: T")
//       .Output("product: T")
//       .Attr("transpose_a: bool = false")
//       .Attr("transpose_b: bool = false")
//       .Attr("T: {bfloat16, half, float, double, int32, int64}")
//       .SetShapeFn(MatMulShape)
//       .Doc("C = op(A) x op(B); shapes [M,K] x [K,N] -> [M,N].");
//
// Arg specs: "name: T" (type attr), "name: float" (fixed type), "name: N * T" (N copies,
// N an int attr), "name: Tlist" (list(type) attr), "name: Ref(T)" (reference). Attr specs:
// "name: type", "name: {float, int32}" (type with allowed values), "name: int >= 1",
// "name: list(int) = [1, 1]", "name: {'SAME', 'VALID'}" (string with allowed values).
// Defaults use TF's literal syntax: ints, floats, true/false, 'strings', DT_FLOAT or float for
// types, [a, b] for lists, and for shapes "{ unknown_rank: true }", "[2,3]", "[-1,3]" or "[]".
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "tensorflux/core/status.h"
#include "tensorflux/framework/shape_inference.h"
#include "tensorflux/op_def.pb.h"

namespace tensorflux {

struct OpRegistrationData {
  OpDef op_def;
  ShapeInferenceFn shape_fn;  // never empty: defaults to UnknownShape
};

class OpDefBuilder {
 public:
  explicit OpDefBuilder(std::string op_name);
  OpDefBuilder& Input(std::string spec);
  OpDefBuilder& Output(std::string spec);
  OpDefBuilder& Attr(std::string spec);
  OpDefBuilder& SetIsStateful();
  OpDefBuilder& SetIsCommutative();
  OpDefBuilder& SetIsAggregate();
  OpDefBuilder& SetAllowsUninitializedInput();
  OpDefBuilder& SetShapeFn(ShapeInferenceFn fn);
  OpDefBuilder& Doc(std::string text);
  // Parses the specs. INVALID_ARGUMENT naming the op and the bad spec.
  Status Finalize(OpRegistrationData* out) const;

 private:
  std::string name_;
  std::vector<std::string> inputs_, outputs_, attrs_;
  bool stateful_ = false, commutative_ = false, aggregate_ = false, uninit_ = false;
  ShapeInferenceFn shape_fn_;
  std::string doc_;
};

class OpRegistry {
 public:
  static OpRegistry* Global();

  // ALREADY_EXISTS for a duplicate name; the builder's parse error otherwise.
  Status Register(const OpDefBuilder& builder);
  // NOT_FOUND: "Op type not registered 'Foo'".
  StatusOr<const OpRegistrationData*> LookUp(std::string_view op_name) const;
  StatusOr<const OpDef*> LookUpOpDef(std::string_view op_name) const;
  // All registered ops, sorted by name.
  std::vector<const OpRegistrationData*> ListOps() const;
  OpList ToOpList() const;

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<OpRegistrationData>> ops_;
};

namespace register_op {
struct OpRegistrar {
  // Registration errors at static-init time are programming errors in the op library: they are
  // printed to stderr and the op is left out (it then fails lookups with a clear NOT_FOUND).
  OpRegistrar(const OpDefBuilder& b);  // NOLINT
};
}  // namespace register_op

}  // namespace tensorflux

#define REGISTER_OP(name) REGISTER_OP_UNIQ_HELPER(__COUNTER__, name)
#define REGISTER_OP_UNIQ_HELPER(ctr, name) REGISTER_OP_UNIQ(ctr, name)
#define REGISTER_OP_UNIQ(ctr, name)                                                   \
  static ::tensorflux::register_op::OpRegistrar register_op##ctr [[maybe_unused]] = \
      ::tensorflux::OpDefBuilder(name)
