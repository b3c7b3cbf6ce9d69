// RunStep's messages with their tensors in memory, on the wire as master.proto's RunStepRequest
// and RunStepResponse (TF's field numbers) through gRPC's SerializationTraits: the client's
// feeds and the master's fetched tensors go out from their own buffers and arrive into one
// allocation each (distributed/tensor_coding.h), never through a TensorProto message. Either
// side can still be a plain protobuf peer: the bytes are the same.
//
// Decoding errors: a malformed request is INVALID_ARGUMENT ("Malformed RunStep request: ..."),
// a malformed response DATA_LOSS (in RunStepReply::decode_status); a tensor's own errors (bad
// dtype or shape) as they are.
#pragma once

#include "grpcpp/impl/serialization_traits.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/status.h"
#include "tensorflux/distributed/tensor_coding.h"
#include "tensorflux/master.pb.h"

namespace tensorflux {

// RunStepRequest: `request`'s feed field stays empty, the feeds are `feeds`.
struct RunStepCall {
  RunStepRequest request;
  NamedTensors feeds;
};

// RunStepResponse: `response`'s tensor field stays empty, the fetched tensors are `tensors`.
// `decode_status`: why the received bytes could not be decoded (DATA_LOSS, ...). A failed
// decode is reported here rather than to gRPC, whose blocking call would replace it by
// UNIMPLEMENTED "No message returned for unary request".
struct RunStepReply {
  RunStepResponse response;
  NamedTensors tensors;
  Status decode_status;
};

inline constexpr int kRunStepRequestFeedField = 2;      // RunStepRequest.feed
inline constexpr int kRunStepResponseTensorField = 1;   // RunStepResponse.tensor

grpc::Status SerializeRunStepCall(const RunStepCall& call, grpc::ByteBuffer* out);
grpc::Status DeserializeRunStepCall(const grpc::ByteBuffer& in, RunStepCall* call);
grpc::Status SerializeRunStepReply(const RunStepReply& reply, grpc::ByteBuffer* out);
// Always OK: the decoding's own status goes to reply->decode_status.
grpc::Status DeserializeRunStepReply(const grpc::ByteBuffer& in, RunStepReply* reply);

}  // namespace tensorflux

namespace grpc {

template <>
class SerializationTraits<tensorflux::RunStepCall, void> {
 public:
  static Status Serialize(const tensorflux::RunStepCall& msg, ByteBuffer* bb, bool* own_buffer) {
    *own_buffer = true;
    return tensorflux::SerializeRunStepCall(msg, bb);
  }
  static Status Deserialize(ByteBuffer* bb, tensorflux::RunStepCall* msg) {
    Status s = tensorflux::DeserializeRunStepCall(*bb, msg);
    bb->Clear();
    return s;
  }
};

template <>
class SerializationTraits<tensorflux::RunStepReply, void> {
 public:
  static Status Serialize(const tensorflux::RunStepReply& msg, ByteBuffer* bb,
                          bool* own_buffer) {
    *own_buffer = true;
    return tensorflux::SerializeRunStepReply(msg, bb);
  }
  static Status Deserialize(ByteBuffer* bb, tensorflux::RunStepReply* msg) {
    Status s = tensorflux::DeserializeRunStepReply(*bb, msg);
    bb->Clear();
    return s;
  }
};

}  // namespace grpc
