// Elementwise math ops and Cast, with TensorFlow's names, arg names, attrs and type lists (minus
// the complex and quantized types TensorFlux does not have).
//
// Binary ops broadcast their inputs by NumPy rules (shape_inference::BroadcastBinaryOpShape);
// unary ops keep their input's shape. CPU kernels: kernels/cpu/cwise_ops_*.cc and cast_op.cc.
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
