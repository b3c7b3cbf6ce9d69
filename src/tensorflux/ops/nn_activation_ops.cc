// Elementwise activations and their backward ops, with TensorFlow's names, arg names, attrs and
// type lists (minus complex and quantized types). Forward ops keep their input's shape; backward
// ops take two inputs of one shape (no broadcasting) in TF's order. CPU kernels:
// kernels/cpu/cwise_ops_activation.cc (functors in cwise_functors_nn.h); gradients:
// gradients/activation_grad.cc.

#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

constexpr const char* kRealNumberTypes =
    "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
    "uint64}";
constexpr const char* kFloatTypes = "T: {half, bfloat16, float, double}";

}  // namespace

// ---------------------------------------------------------------- forward

REGISTER_OP("Relu")
    .Input("features: T")
    .Output("activations: T")
    .Attr(kRealNumberTypes)
    .SetShapeFn(shape_inference::UnchangedShape)
    .Doc("activations = max(features, 0) elementwise; NaN stays NaN.");

REGISTER_OP("Relu6")
    .Input("features: T")
    .Output("activations: T")
    .Attr(kRealNumberTypes)
    .SetShapeFn(shape_inference::UnchangedShape)
    .Doc("activations = min(max(features, 0), 6) elementwise; NaN stays NaN.");

REGISTER_OP("LeakyRelu")
    .Input("features: T")
    .Output("activations: T")
    .Attr("alpha: float = 0.2")
    .Attr(kFloatTypes)
    .SetShapeFn(shape_inference::UnchangedShape)
    .Doc("activations = features > 0 ? features : alpha * features, elementwise.");

REGISTER_OP("Elu")
    .Input("features: T")
    .Output("activations: T")
    .Attr(kFloatTypes)
    .SetShapeFn(shape_inference::UnchangedShape)
    .Doc("activations = features < 0 ? exp(features) - 1 : features, elementwise.");

REGISTER_OP("Selu")
    .Input("features: T")
    .Output("activations: T")
    .Attr(kFloatTypes)
    .SetShapeFn(shape_inference::UnchangedShape)
    .Doc(
        "activations = scale * (features < 0 ? alpha * (exp(features) - 1) : features), "
        "scale = 1.0507009873554805, alpha = 1.6732632423543772 (Klambauer et al.).");

REGISTER_OP("Softplus")
    .Input("features: T")
    .Output("activations: T")
    .Attr(kFloatTypes)
    .SetShapeFn(shape_inference::UnchangedShape)
    .Doc(
        "activations = log(exp(features) + 1) elementwise, computed as max(x, 0) + "
        "log1p(exp(-|x|)): finite for any finite x (x for large x, exp(x) for very negative x).");

// ---------------------------------------------------------------- backward

#define TX_CWISE_BACKWARD(name, in0, in1, out, types, doc) \
  REGISTER_OP(name)                                        \
      .Input(in0 ": T")                                    \
      .Input(in1 ": T")                                    \
      .Output(out ": T")                                   \
      .Attr(types)                                         \
      .SetShapeFn(shape_inference::MergeAllInputsShape)    \
      .Doc(doc " Both inputs have one shape; INVALID_ARGUMENT otherwise.")

TX_CWISE_BACKWARD("ReluGrad", "gradients", "features", "backprops", kRealNumberTypes,
                  "backprops = gradients where features > 0, else 0.");
TX_CWISE_BACKWARD("Relu6Grad", "gradients", "features", "backprops", kRealNumberTypes,
                  "backprops = gradients where 0 < features < 6, else 0.");
TX_CWISE_BACKWARD("SoftplusGrad", "gradients", "features", "backprops", kFloatTypes,
                  "backprops = gradients * sigmoid(features).");
TX_CWISE_BACKWARD("EluGrad", "gradients", "outputs", "backprops", kFloatTypes,
                  "backprops = outputs < 0 ? gradients * (outputs + 1) : gradients, with "
                  "outputs = Elu(features).");
TX_CWISE_BACKWARD("SeluGrad", "gradients", "outputs", "backprops", kFloatTypes,
                  "backprops = outputs < 0 ? gradients * (outputs + scale * alpha) : "
                  "gradients * scale, with outputs = Selu(features).");
TX_CWISE_BACKWARD("TanhGrad", "y", "dy", "z", kFloatTypes,
                  "z = dy * (1 - y^2), with y = Tanh(x).");
TX_CWISE_BACKWARD("SigmoidGrad", "y", "dy", "z", kFloatTypes,
                  "z = dy * y * (1 - y), with y = Sigmoid(x).");
TX_CWISE_BACKWARD("RsqrtGrad", "y", "dy", "z", kFloatTypes,
                  "z = dy * -0.5 * y^3, with y = Rsqrt(x).");
TX_CWISE_BACKWARD("SqrtGrad", "y", "dy", "z", kFloatTypes,
                  "z = dy * 0.5 / y, with y = Sqrt(x).");
TX_CWISE_BACKWARD("ReciprocalGrad", "y", "dy", "z", kFloatTypes,
                  "z = -dy * y^2, with y = Reciprocal(x).");
#undef TX_CWISE_BACKWARD

REGISTER_OP("LeakyReluGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr("alpha: float = 0.2")
    .Attr(kFloatTypes)
    .SetShapeFn(shape_inference::MergeAllInputsShape)
    .Doc(
        "backprops = features > 0 ? gradients : alpha * gradients. Both inputs have one shape; "
        "INVALID_ARGUMENT otherwise.");

}  // namespace tensorflux
