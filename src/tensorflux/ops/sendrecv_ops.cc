// _Send and _Recv (TF's sendrecv_ops.cc signatures): the pair the partitioner
// (passes/graph_partition.h) puts on each cross-device edge. _Send hands its input to the step's
// rendezvous under the key Rendezvous::CreateKey(send_device, send_device_incarnation,
// recv_device, tensor_name, frame:iter); _Recv outputs the tensor sent under the same key.
// client_terminated marks a pair whose other end is the client rather than a graph node.
// _HostSend/_HostRecv are the same ops for tensors kept in host memory on a device with its own
// memory (a GPU's shapes); on CPU devices they are identical to _Send/_Recv.
// All are stateful so no pass merges, folds or removes them.
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

// The attrs both ops carry (they make the rendezvous key).
OpDefBuilder& KeyAttrs(OpDefBuilder& b) {
  return b.Attr("tensor_name: string")
      .Attr("send_device: string")
      .Attr("send_device_incarnation: int")
      .Attr("recv_device: string")
      .Attr("client_terminated: bool = false")
      .SetIsStateful()
      .SetShapeFn(shape_inference::UnknownShape);
}

OpDefBuilder& SendSpec(OpDefBuilder&& b) {
  return KeyAttrs(b.Input("tensor: T").Attr("T: type"))
      .Doc("Sends `tensor` (dtype T, any shape) from send_device to recv_device under the "
           "rendezvous key built from the attrs.");
}

OpDefBuilder& RecvSpec(OpDefBuilder&& b) {
  return KeyAttrs(b.Output("tensor: tensor_type").Attr("tensor_type: type"))
      .Doc("The tensor (dtype tensor_type, any shape) sent under the rendezvous key built from "
           "the attrs.");
}

const register_op::OpRegistrar kSend = SendSpec(OpDefBuilder("_Send"));
const register_op::OpRegistrar kRecv = RecvSpec(OpDefBuilder("_Recv"));
const register_op::OpRegistrar kHostSend = SendSpec(OpDefBuilder("_HostSend"));
const register_op::OpRegistrar kHostRecv = RecvSpec(OpDefBuilder("_HostRecv"));

}  // namespace
}  // namespace tensorflux
