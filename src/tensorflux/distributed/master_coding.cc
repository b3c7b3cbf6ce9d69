#include "tensorflux/distributed/master_coding.h"

#include "tensorflux/distributed/grpc_channel.h"

namespace tensorflux {

grpc::Status SerializeRunStepCall(const RunStepCall& call, grpc::ByteBuffer* out) {
  return ToGrpcStatus(EncodeWithNamedTensors(call.request, kRunStepRequestFeedField, call.feeds,
                                             -1, "RunStep request", out));
}

grpc::Status DeserializeRunStepCall(const grpc::ByteBuffer& in, RunStepCall* call) {
  Status s = DecodeWithNamedTensors(in, kRunStepRequestFeedField, nullptr, "RunStep request",
                                    &call->request, &call->feeds);
  // The client sent bytes that are not a request: its error, not lost data.
  if (s.code() == absl::StatusCode::kDataLoss) s = errors::InvalidArgument(s.message());
  return ToGrpcStatus(s);
}

grpc::Status SerializeRunStepReply(const RunStepReply& reply, grpc::ByteBuffer* out) {
  return ToGrpcStatus(EncodeWithNamedTensors(reply.response, kRunStepResponseTensorField,
                                             reply.tensors, -1, "RunStep response", out));
}

grpc::Status DeserializeRunStepReply(const grpc::ByteBuffer& in, RunStepReply* reply) {
  reply->decode_status = DecodeWithNamedTensors(in, kRunStepResponseTensorField, nullptr,
                                                "RunStep response", &reply->response,
                                                &reply->tensors);
  return grpc::Status::OK;
}

}  // namespace tensorflux
