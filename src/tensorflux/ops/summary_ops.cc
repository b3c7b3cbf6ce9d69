// Summary ops of TF 1.x (core/ops/logging_ops.cc): each outputs a serialized Summary
// (proto/tensorflux/summary.proto) as a string scalar, which FileWriter.add_summary writes to an
// event file.
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

Status ScalarStringOutput(InferenceContext* c) {
  c->set_output(0, PartialTensorShape::Scalar());
  return OkStatus();
}

}  // namespace

REGISTER_OP("ScalarSummary")
    .Input("tags: string")
    .Input("values: T")
    .Output("summary: string")
    .Attr("T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
          "uint64}")
    .SetShapeFn(ScalarStringOutput)
    .Doc("A Summary with one simple_value per element: tags and values must have one shape; "
         "value i is reported under tags[i] (a tag may repeat, as in TF).");

REGISTER_OP("HistogramSummary")
    .Input("tag: string")
    .Input("values: T")
    .Output("summary: string")
    .Attr("T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
          "uint64} = DT_FLOAT")
    .SetShapeFn(ScalarStringOutput)
    .Doc("A Summary with one histogram (TF's default buckets) of all elements of values under "
         "the scalar tag. A NaN or Inf value is INVALID_ARGUMENT naming the tag.");

REGISTER_OP("MergeSummary")
    .Input("inputs: N * string")
    .Output("summary: string")
    .Attr("N: int >= 1")
    .SetShapeFn(ScalarStringOutput)
    .Doc("The union of the values of serialized Summary protos (each input may hold several). "
         "A tag that occurs twice, or an input that is not a Summary, is INVALID_ARGUMENT.");

}  // namespace tensorflux
