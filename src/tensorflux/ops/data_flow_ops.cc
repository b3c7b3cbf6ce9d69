// Queue and gradient-accumulator ops (TensorFlow's data_flow_ops), the blocking ops of
// between-graph synchronous training (tx.train.SyncReplicasOptimizer). Kernels:
// kernels/cpu/queue_ops.cc and kernels/cpu/accumulator_ops.cc.
//
// FIFOQueueV2 -> handle: resource. A first-in first-out queue of elements, each a tuple of
//   tensors of `component_types` (and `shapes`, when given: one fully defined shape per
//   component); capacity -1 = unbounded. Created on first use in the device's ResourceMgr
//   under (container, shared_name or the node name); a second node sharing the name must ask
//   for the same types, shapes and capacity (INVALID_ARGUMENT otherwise).
// QueueEnqueueV2      handle, components: Tcomponents        one element; blocks while full
// QueueEnqueueManyV2  handle, components: Tcomponents        dim 0 of every component is the
//                                                            number of elements (all equal)
// QueueDequeueV2      handle -> components: component_types  one element; blocks while empty
// QueueDequeueManyV2  handle, n: int32 -> components         n elements stacked along a new
//                                                            dim 0; needs `shapes`
// QueueSizeV2         handle -> size: int32 scalar
// QueueCloseV2        handle; cancel_pending_enqueues: fail the blocked enqueues (CANCELLED);
//                     closing a closed queue is CANCELLED
// Errors (TF's codes): enqueue to a closed queue is CANCELLED; a dequeue from a closed queue
// with fewer elements than asked is OUT_OF_RANGE; a blocked enqueue/dequeue of a cancelled or
// aborted step ends with CANCELLED. timeout_ms is accepted and, as in TF, not applied (bound a
// step with RunOptions.timeout_in_ms / ConfigProto.operation_timeout_in_ms instead).
//
// ConditionalAccumulator -> handle: Ref(string). Aggregates gradients of `dtype` and `shape`
//   for one global step (TF's ConditionalAccumulator; the ref edge carries a resource handle,
//   see framework/resource_var.h). reduction_type MEAN (default) or SUM.
// AccumulatorApplyGradient  handle, local_step: int64, gradient: dtype   adds the gradient
//                           unless local_step < the accumulator's global step (a stale
//                           gradient, dropped without error)
// AccumulatorTakeGradient   handle, num_required: int32 -> average: dtype   blocks until
//                           num_required gradients were added, returns their mean (or sum),
//                           clears the aggregate and adds 1 to the global step
// AccumulatorNumAccumulated handle -> num_accumulated: int32 scalar
// AccumulatorSetGlobalStep  handle, new_global_step: int64 scalar
// The Resource* forms (ResourceConditionalAccumulator, ResourceAccumulator*) take a resource
// handle instead of the ref and share the kernels.
#include <string>
#include <vector>

#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

using shape_inference::ScalarShape;

Status NoOutputs(InferenceContext*) { return OkStatus(); }

Status ScalarHandleInput(InferenceContext* c) { return c->WithRank(0, 0); }

// Dequeue: the handle carries no shapes here, so the components are of unknown rank.
Status DequeueShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(ScalarHandleInput(c));
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialTensorShape::UnknownRank());
  return OkStatus();
}

Status SizeShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(ScalarHandleInput(c));
  return ScalarShape(c);
}

Status TakeGradientShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(c->WithRank(1, 0));
  c->set_output(0, PartialTensorShape::UnknownRank());
  return OkStatus();
}

Status SetGlobalStepShape(InferenceContext* c) { return c->WithRank(1, 0); }

Status ApplyGradientShape(InferenceContext* c) { return c->WithRank(1, 0); }

}  // namespace

// ---------------------------------------------------------------- FIFOQueueV2 family

REGISTER_OP("FIFOQueueV2")
    .Output("handle: resource")
    .Attr("component_types: list(type) >= 1")
    .Attr("shapes: list(shape) >= 0 = []")
    .Attr("capacity: int = -1")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .SetShapeFn(ScalarShape)
    .Doc("A FIFO queue of tuples of component_types; capacity -1 = unbounded.");

REGISTER_OP("QueueEnqueueV2")
    .Input("handle: resource")
    .Input("components: Tcomponents")
    .Attr("Tcomponents: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .SetShapeFn(NoOutputs)
    .Doc("Enqueues one element; blocks while the queue is full.");

REGISTER_OP("QueueEnqueueManyV2")
    .Input("handle: resource")
    .Input("components: Tcomponents")
    .Attr("Tcomponents: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .SetShapeFn(NoOutputs)
    .Doc("Enqueues the slices along dim 0 of the components as elements.");

REGISTER_OP("QueueDequeueV2")
    .Input("handle: resource")
    .Output("components: component_types")
    .Attr("component_types: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .SetShapeFn(DequeueShape)
    .Doc("Dequeues one element; blocks while the queue is empty.");

REGISTER_OP("QueueDequeueManyV2")
    .Input("handle: resource")
    .Input("n: int32")
    .Output("components: component_types")
    .Attr("component_types: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .SetShapeFn(DequeueShape)
    .Doc("Dequeues n elements stacked along a new dim 0.");

REGISTER_OP("QueueSizeV2")
    .Input("handle: resource")
    .Output("size: int32")
    .SetIsStateful()
    .SetShapeFn(SizeShape)
    .Doc("The number of elements in the queue.");

REGISTER_OP("QueueCloseV2")
    .Input("handle: resource")
    .Attr("cancel_pending_enqueues: bool = false")
    .SetIsStateful()
    .SetShapeFn(ScalarHandleInput)
    .Doc("Closes the queue: later enqueues fail, dequeues drain what is left.");

// ---------------------------------------------------------------- ConditionalAccumulator family

namespace {

// The ref (TF 1.x) and resource forms of each accumulator op differ only in the handle's type.
void RegisterAccumulatorOps(const std::string& prefix, const std::string& handle_type) {
  const std::string handle_out = "handle: " + handle_type;
  const std::string handle_in = "handle: " + handle_type;
  const std::string accum = prefix.empty() ? "ConditionalAccumulator"
                                           : prefix + "ConditionalAccumulator";
  register_op::OpRegistrar(
      OpDefBuilder(accum)
          .Output(handle_out)
          .Attr("dtype: {float, double, half, bfloat16, int32, int64}")
          .Attr("shape: shape")
          .Attr("container: string = ''")
          .Attr("shared_name: string = ''")
          .Attr("reduction_type: {'MEAN', 'SUM'} = 'MEAN'")
          .SetIsStateful()
          .SetShapeFn(ScalarShape)
          .Doc("An accumulator of gradients for one global step."));
  register_op::OpRegistrar(
      OpDefBuilder(prefix + "AccumulatorApplyGradient")
          .Input(handle_in)
          .Input("local_step: int64")
          .Input("gradient: dtype")
          .Attr("dtype: {float, double, half, bfloat16, int32, int64}")
          .SetIsStateful()
          .SetShapeFn(ApplyGradientShape)
          .Doc("Adds the gradient unless local_step is older than the global step."));
  register_op::OpRegistrar(
      OpDefBuilder(prefix + "AccumulatorTakeGradient")
          .Input(handle_in)
          .Input("num_required: int32")
          .Output("average: dtype")
          .Attr("dtype: {float, double, half, bfloat16, int32, int64}")
          .SetIsStateful()
          .SetShapeFn(TakeGradientShape)
          .Doc("Blocks until num_required gradients arrived; returns their mean (or sum)."));
  register_op::OpRegistrar(
      OpDefBuilder(prefix + "AccumulatorNumAccumulated")
          .Input(handle_in)
          .Output("num_accumulated: int32")
          .SetIsStateful()
          .SetShapeFn(ScalarShape)
          .Doc("The number of gradients aggregated so far."));
  register_op::OpRegistrar(
      OpDefBuilder(prefix + "AccumulatorSetGlobalStep")
          .Input(handle_in)
          .Input("new_global_step: int64")
          .SetIsStateful()
          .SetShapeFn(SetGlobalStepShape)
          .Doc("Sets the accumulator's global step."));
}

[[maybe_unused]] const bool accumulator_ops_registered = [] {
  RegisterAccumulatorOps("", "Ref(string)");
  RegisterAccumulatorOps("Resource", "resource");
  return true;
}();

}  // namespace
}  // namespace tensorflux
