// Elementwise math ops (arithmetic, comparisons, logical, Select/SelectV2, ClipByValue, AddN) and
// Cast, with TensorFlow's names, arg names, attrs and type lists (minus the complex and quantized
// types TensorFlux does not have). Activations and TF's *Grad ops: nn_activation_ops.cc.
//
// Binary ops broadcast their inputs by NumPy rules (shape_inference::BroadcastBinaryOpShape);
// unary ops keep their input's shape. CPU kernels: kernels/cpu/cwise_ops_*.cc (three-input ops in
// cwise_ops_ternary.cc, AddN in cwise_ops_addn.cc) and cast_op.cc; gradients: math_grad.cc and
// cwise_grad.cc.
//
// To add an elementwise op: register it here with TX_CWISE_UNARY or TX_CWISE_BINARY, add its
// functor to kernels/cpu/cwise_functors.h and one registration line in a cwise_ops_*.cc file.

#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

// Type lists, as TensorFlow's op registrations spell them for the types we support.
constexpr const char* kBinaryMoreTypes =
    "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64, uint32, "
    "uint64}";
constexpr const char* kMinMaxTypes =
    "T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, "
    "uint64}";
constexpr const char* kUnarySignedTypes =
    "T: {bfloat16, half, float, double, int8, int16, int32, int64}";
constexpr const char* kUnaryFloatTypes = "T: {bfloat16, half, float, double}";
constexpr const char* kRealNumberTypes =
    "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
    "uint64}";

// 'x: T, y: T -> z: bool', broadcasting.
Status ComparisonShape(InferenceContext* c) { return shape_inference::BroadcastBinaryOpShape(c); }

// Equal/NotEqual: with incompatible_shape_error=false, shapes that do not broadcast are not an
// error: the kernel then returns a scalar, and the output shape is a scalar (as TF's).
Status EqualityShape(InferenceContext* c) {
  bool incompatible_shape_error = true;
  TX_RETURN_IF_ERROR(c->GetAttr("incompatible_shape_error", &incompatible_shape_error));
  StatusOr<PartialTensorShape> s = shape_inference::BroadcastShapes(c->input(0), c->input(1));
  if (!s.ok() && !incompatible_shape_error) {
    c->set_output(0, PartialTensorShape::Scalar());
    return OkStatus();
  }
  return shape_inference::BroadcastBinaryOpShape(c);
}

// NumPy broadcast of every input's shape (SelectV2).
Status BroadcastAllInputsShape(InferenceContext* c) {
  PartialTensorShape out = c->input(0);
  for (int i = 1; i < c->num_inputs(); ++i) {
    StatusOr<PartialTensorShape> s = shape_inference::BroadcastShapes(out, c->input(i));
    if (!s.ok()) {
      return c->Error(s.status().message(), " for node '", c->node_def().name(), "' (op ",
                      c->node_def().op(), ")");
    }
    out = *std::move(s);
  }
  c->set_output(0, std::move(out));
  return OkStatus();
}

// Select (v1): t and e have one shape; condition has it too, or is a scalar, or is a vector
// whose size is t's first dim.
Status SelectShape(InferenceContext* c) {
  StatusOr<PartialTensorShape> te = c->input(1).MergeWith(c->input(2));
  if (!te.ok()) {
    return c->Error("Select node '", c->node_def().name(), "': 't' and 'e' must have the same ",
                    "shape, got ", c->input(1).DebugString(), " and ", c->input(2).DebugString());
  }
  const PartialTensorShape& cond = c->input(0);
  if (!cond.unknown_rank() && !te->unknown_rank() && cond.dims() != 0) {
    const bool as_vector = cond.dims() == 1 && te->dims() > 1;
    const bool ok = as_vector ? (cond.dim_size(0) < 0 || te->dim_size(0) < 0 ||
                                 cond.dim_size(0) == te->dim_size(0))
                              : cond.IsCompatibleWith(*te);
    if (!ok) {
      return c->Error("Select node '", c->node_def().name(), "': condition ",
                      cond.DebugString(), " must be a scalar, have the shape of 't' (",
                      te->DebugString(), "), or be a vector of its first dimension");
    }
  }
  c->set_output(0, *std::move(te));
  return OkStatus();
}

// ClipByValue: clip_value_min/max broadcast to t without changing t's shape.
Status ClipByValueShape(InferenceContext* c) {
  for (int i = 1; i < 3; ++i) {
    StatusOr<PartialTensorShape> s = shape_inference::BroadcastShapes(c->input(0), c->input(i));
    if (!s.ok() || (s->IsFullyDefined() && c->input(0).IsFullyDefined() &&
                    !(*s == c->input(0)))) {
      return c->Error("ClipByValue node '", c->node_def().name(), "': ",
                      i == 1 ? "clip_value_min " : "clip_value_max ",
                      c->input(i).DebugString(), " does not broadcast to t ",
                      c->input(0).DebugString());
    }
  }
  c->set_output(0, c->input(0));
  return OkStatus();
}

}  // namespace

// 'x: T, y: T -> z: T', broadcasting by NumPy rules.
#define TX_CWISE_BINARY(types)                                       \
  Input("x: T").Input("y: T").Output("z: T").Attr(types).SetShapeFn( \
      shape_inference::BroadcastBinaryOpShape)

// 'x: T -> y: T', same shape.
#define TX_CWISE_UNARY(types) \
  Input("x: T").Output("y: T").Attr(types).SetShapeFn(shape_inference::UnchangedShape)

// ---------------------------------------------------------------- binary, broadcasting

REGISTER_OP("Add")
    .TX_CWISE_BINARY("T: {bfloat16, half, float, double, uint8, int8, int16, int32, int64, string}")
    .Doc("z = x + y elementwise, broadcasting; strings are concatenated.");

REGISTER_OP("AddV2")
    .TX_CWISE_BINARY(
        "T: {bfloat16, half, float, double, uint8, uint16, uint32, uint64, int8, int16, int32, "
        "int64}")
    .SetIsAggregate()
    .SetIsCommutative()
    .Doc("z = x + y elementwise, broadcasting (numeric types only).");

REGISTER_OP("Sub").TX_CWISE_BINARY(kBinaryMoreTypes).Doc("z = x - y elementwise, broadcasting.");

REGISTER_OP("Mul")
    .TX_CWISE_BINARY(kBinaryMoreTypes)
    .SetIsCommutative()
    .Doc("z = x * y elementwise, broadcasting.");

REGISTER_OP("RealDiv")
    .TX_CWISE_BINARY(kBinaryMoreTypes)
    .Doc(
        "z = x / y elementwise, broadcasting. Integer types divide truncating toward zero "
        "and fail with INVALID_ARGUMENT 'Integer division by zero' when y holds a 0.");

REGISTER_OP("Maximum")
    .TX_CWISE_BINARY(kMinMaxTypes)
    .Doc("z = max(x, y) elementwise, broadcasting; NaN propagates.");

REGISTER_OP("Minimum")
    .TX_CWISE_BINARY(kMinMaxTypes)
    .Doc("z = min(x, y) elementwise, broadcasting; NaN propagates.");


REGISTER_OP("FloorDiv")
    .TX_CWISE_BINARY(kBinaryMoreTypes)
    .Doc(
        "z = floor(x / y) elementwise, broadcasting (rounds toward -inf). Integer types fail with "
        "INVALID_ARGUMENT 'Integer division by zero' when y holds a 0; MIN / -1 wraps to MIN.");

REGISTER_OP("FloorMod")
    .TX_CWISE_BINARY(kMinMaxTypes)
    .Doc(
        "z = x - floor(x / y) * y elementwise, broadcasting: the remainder has the sign of y "
        "(Python's %). Integer types: INVALID_ARGUMENT 'Integer division by zero' when y holds "
        "a 0; MIN % -1 is 0.");

REGISTER_OP("Pow")
    .TX_CWISE_BINARY("T: {bfloat16, float, half, double, int8, int16, int32, int64}")
    .Doc(
        "z = x^y elementwise, broadcasting. Integers are exact (wrapping on overflow); a "
        "negative integer exponent is INVALID_ARGUMENT.");

REGISTER_OP("SquaredDifference")
    .TX_CWISE_BINARY("T: {bfloat16, half, float, double, int32, int64}")
    .SetIsCommutative()
    .Doc("z = (x - y)^2 elementwise, broadcasting.");

// ---------------------------------------------------------------- comparisons, logical

#define TX_CWISE_COMPARISON(name, what)                                                   \
  REGISTER_OP(name)                                                                       \
      .Input("x: T")                                                                      \
      .Input("y: T")                                                                      \
      .Output("z: bool")                                                                  \
      .Attr(kRealNumberTypes)                                                             \
      .SetShapeFn(ComparisonShape)                                                        \
      .Doc("z = (" what ") elementwise as bool, broadcasting; comparisons with NaN are " \
           "false.")
TX_CWISE_COMPARISON("Less", "x < y");
TX_CWISE_COMPARISON("LessEqual", "x <= y");
TX_CWISE_COMPARISON("Greater", "x > y");
TX_CWISE_COMPARISON("GreaterEqual", "x >= y");
#undef TX_CWISE_COMPARISON

REGISTER_OP("Equal")
    .Input("x: T")
    .Input("y: T")
    .Output("z: bool")
    .Attr("T: type")
    .Attr("incompatible_shape_error: bool = true")
    .SetIsCommutative()
    .SetShapeFn(EqualityShape)
    .Doc(
        "z = (x == y) elementwise as bool, broadcasting, any type (NaN != NaN). Shapes that do "
        "not broadcast: INVALID_ARGUMENT, or a scalar false when incompatible_shape_error is "
        "false.");

REGISTER_OP("NotEqual")
    .Input("x: T")
    .Input("y: T")
    .Output("z: bool")
    .Attr("T: type")
    .Attr("incompatible_shape_error: bool = true")
    .SetIsCommutative()
    .SetShapeFn(EqualityShape)
    .Doc(
        "z = (x != y) elementwise as bool, broadcasting, any type. Shapes that do not "
        "broadcast: INVALID_ARGUMENT, or a scalar true when incompatible_shape_error is false.");

REGISTER_OP("LogicalAnd")
    .Input("x: bool")
    .Input("y: bool")
    .Output("z: bool")
    .SetIsCommutative()
    .SetShapeFn(shape_inference::BroadcastBinaryOpShape)
    .Doc("z = x && y elementwise, broadcasting.");

REGISTER_OP("LogicalOr")
    .Input("x: bool")
    .Input("y: bool")
    .Output("z: bool")
    .SetIsCommutative()
    .SetShapeFn(shape_inference::BroadcastBinaryOpShape)
    .Doc("z = x || y elementwise, broadcasting.");

REGISTER_OP("LogicalNot")
    .Input("x: bool")
    .Output("y: bool")
    .SetShapeFn(shape_inference::UnchangedShape)
    .Doc("y = !x elementwise.");

// ---------------------------------------------------------------- selection, clipping, sums

REGISTER_OP("Select")
    .Input("condition: bool")
    .Input("t: T")
    .Input("e: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(SelectShape)
    .Doc(
        "output = condition ? t : e (TF v1 where). t and e have one shape; condition has that "
        "shape, or is a scalar (picks all of t or all of e), or is a vector of t's first "
        "dimension (picks whole rows). Anything else: INVALID_ARGUMENT.");

REGISTER_OP("SelectV2")
    .Input("condition: bool")
    .Input("t: T")
    .Input("e: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(BroadcastAllInputsShape)
    .Doc("output = condition ? t : e elementwise, the three inputs broadcast by NumPy rules.");

REGISTER_OP("ClipByValue")
    .Input("t: T")
    .Input("clip_value_min: T")
    .Input("clip_value_max: T")
    .Output("output: T")
    .Attr(kRealNumberTypes)
    .SetShapeFn(ClipByValueShape)
    .Doc(
        "output = max(min(t, clip_value_max), clip_value_min) elementwise (so clip_value_min "
        "wins where min > max). clip_value_min/max are scalars, t's shape, or any shape that "
        "broadcasts to t's shape (TF's kernel takes the first two only); otherwise "
        "INVALID_ARGUMENT.");

REGISTER_OP("AddN")
    .Input("inputs: N * T")
    .Output("sum: T")
    .Attr("N: int >= 1")
    .Attr(kRealNumberTypes)
    .SetIsAggregate()
    .SetIsCommutative()
    .SetShapeFn(shape_inference::MergeAllInputsShape)
    .Doc(
        "sum = inputs[0] + ... + inputs[N-1] elementwise; the N inputs have one shape (no "
        "broadcasting; INVALID_ARGUMENT otherwise). Integers wrap. Reuses an input's buffer "
        "when no one else holds it.");

// ---------------------------------------------------------------- unary

REGISTER_OP("Neg").TX_CWISE_UNARY(kUnarySignedTypes).Doc("y = -x elementwise.");

REGISTER_OP("Square")
    .TX_CWISE_UNARY(
        "T: {bfloat16, half, float, double, int8, int16, int32, int64, uint8, uint16, uint32, "
        "uint64}")
    .Doc("y = x * x elementwise.");

REGISTER_OP("Sqrt").TX_CWISE_UNARY(kUnaryFloatTypes).Doc("y = sqrt(x) elementwise.");
REGISTER_OP("Exp").TX_CWISE_UNARY(kUnaryFloatTypes).Doc("y = e^x elementwise.");
REGISTER_OP("Log").TX_CWISE_UNARY(kUnaryFloatTypes).Doc("y = ln(x) elementwise.");
REGISTER_OP("Abs").TX_CWISE_UNARY(kUnarySignedTypes).Doc("y = |x| elementwise (|MIN| wraps to MIN).");
REGISTER_OP("Sign")
    .TX_CWISE_UNARY(kUnarySignedTypes)
    .Doc("y = -1, 0 or 1 as x < 0, x == 0 or x > 0, elementwise; NaN stays NaN.");
REGISTER_OP("Reciprocal")
    .TX_CWISE_UNARY(kUnarySignedTypes)
    .Doc(
        "y = 1 / x elementwise. Integers truncate; an integer 0 is INVALID_ARGUMENT 'Integer "
        "division by zero'.");
REGISTER_OP("Rsqrt").TX_CWISE_UNARY(kUnaryFloatTypes).Doc("y = 1 / sqrt(x) elementwise.");
REGISTER_OP("Log1p").TX_CWISE_UNARY(kUnaryFloatTypes).Doc("y = ln(1 + x) elementwise, accurate near 0.");
REGISTER_OP("Tanh").TX_CWISE_UNARY(kUnaryFloatTypes).Doc("y = tanh(x) elementwise.");
REGISTER_OP("Sigmoid")
    .TX_CWISE_UNARY(kUnaryFloatTypes)
    .Doc("y = 1 / (1 + e^-x) elementwise (0 and 1 at the extremes, never NaN for finite x).");
REGISTER_OP("Erf").TX_CWISE_UNARY(kUnaryFloatTypes).Doc("y = erf(x) elementwise.");
REGISTER_OP("Cos").TX_CWISE_UNARY(kUnaryFloatTypes).Doc("y = cos(x) elementwise (x in radians).");
REGISTER_OP("Sin").TX_CWISE_UNARY(kUnaryFloatTypes).Doc("y = sin(x) elementwise (x in radians).");


// ---------------------------------------------------------------- casting

REGISTER_OP("Cast")
    .Input("x: SrcT")
    .Output("y: DstT")
    .Attr("SrcT: type")
    .Attr("DstT: type")
    .Attr("Truncate: bool = false")
    .SetShapeFn(shape_inference::UnchangedShape)
    .Doc(
        "y = x converted to DstT elementwise. Floating to integer truncates toward zero and "
        "saturates (NaN gives 0); integer to integer wraps; anything to bool is x != 0. "
        "Truncate=true drops the mantissa bits a narrower floating type cannot hold instead of "
        "rounding to nearest.");

#undef TX_CWISE_BINARY
#undef TX_CWISE_UNARY

}  // namespace tensorflux
