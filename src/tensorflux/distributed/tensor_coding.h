// RecvTensorResponse on the wire without extra copies of the tensor (the idea of TF's
// grpc_tensor_coding / TensorResponse; our own code).
//
// Encode: for dtypes whose elements are plain bytes (everything but string, resource and
// variant) the message is hand-framed as protobuf: a small header (RecvTensorResponse.tensor's
// tag and length, TensorProto.dtype, .tensor_shape, .tensor_content's tag and length), then the
// tensor's own buffer as a gRPC slice that holds a reference to the tensor until gRPC has sent
// it, then is_dead / send_start_micros. Tensors of at most kInlineTensorBytes are copied into
// the header instead (a refcounted slice costs more than the copy). Other dtypes go through
// TensorProto's typed fields (string_val, ...). Either way the bytes are an ordinary
// RecvTensorResponse that any protobuf parser reads.
//
// Decode: walks the received slices without joining them; when TensorProto has dtype and shape
// before tensor_content (as every protobuf encoder writes them), the tensor is allocated once
// and the content copied into it from the slices: one allocation, no intermediate string.
// Anything else (typed *_val fields, fields in another order) is parsed as a TensorProto.
//
// Messages with named tensors (RunStepRequest.feed, RunStepResponse.tensor, RunGraphRequest.send,
// RunGraphResponse.recv: repeated NamedTensorProto fields): EncodeWithNamedTensors writes the
// message's other fields with protobuf, then one NamedTensorProto field per tensor framed as
// above (content from the tensor's buffer); DecodeWithNamedTensors decodes those fields into
// tensors (content copied once from the received slices) and parses every other field into a
// message. The bytes are the message protobuf would write, so either side may be a plain
// protobuf peer.
//
// Size: gRPC messages are at most 2^31-1 bytes, so a tensor of up to 2 GiB less the framing
// can be sent; a larger one, or one larger than the channel's max_message_size, is
// RESOURCE_EXHAUSTED naming its size and the limit, before anything is sent.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "google/protobuf/message_lite.h"

#include "grpcpp/support/byte_buffer.h"
#include "tensorflux/core/allocator.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/distributed/worker_interface.h"

namespace tensorflux {

inline constexpr int64_t kMaxGrpcMessageBytes = 2147483647;  // 2^31-1
inline constexpr size_t kInlineTensorBytes = 1024;

// The encoded size of a RecvTensorResponse holding a tensor of `dtype` (a memcpy-able dtype)
// and `shape`, with is_dead and send_start_micros set: what EncodeRecvTensorResponse would
// produce. OK when it is at most `limit` bytes (-1: kMaxGrpcMessageBytes), RESOURCE_EXHAUSTED
// otherwise. Computed from the shape alone, so it checks sizes without allocating.
Status CheckRecvTensorResponseSize(DataType dtype, const TensorShape& shape, int64_t limit);

// Encodes `response` (see above). `limit` as in CheckRecvTensorResponseSize. INVALID_ARGUMENT
// for an uninitialized tensor.
Status EncodeRecvTensorResponse(const TensorResponse& response, int64_t limit,
                                grpc::ByteBuffer* out);

// Decodes a RecvTensorResponse into `response`, allocating the tensor from `allocator`
// (nullptr: the CPU allocator). DATA_LOSS for bytes that are not a RecvTensorResponse or a
// tensor_content whose size does not match dtype and shape; the tensor's own errors
// (INVALID_ARGUMENT for a bad dtype or shape, RESOURCE_EXHAUSTED when it cannot be allocated).
Status DecodeRecvTensorResponse(const grpc::ByteBuffer& buffer, Allocator* allocator,
                                TensorResponse* response);

// Tensors by name, in a message's order.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Encodes `rest` (whose `field` must be empty) with `tensors` appended as its repeated
// NamedTensorProto field number `field`. `message` names the message in errors. INVALID_ARGUMENT
// for an uninitialized tensor, RESOURCE_EXHAUSTED over `limit` (-1: kMaxGrpcMessageBytes).
Status EncodeWithNamedTensors(const google::protobuf::MessageLite& rest, int field,
                              const NamedTensors& tensors, int64_t limit, std::string_view message,
                              grpc::ByteBuffer* out);

// Decodes a message: its NamedTensorProto fields number `field` into `tensors` (in order; the
// tensors allocated from `allocator`, nullptr: the CPU allocator), every other field into
// `rest`. DATA_LOSS for bytes that are not such a message (truncated, a named tensor without
// its tensor, content that does not match dtype and shape), the tensor's own errors otherwise.
Status DecodeWithNamedTensors(const grpc::ByteBuffer& buffer, int field, Allocator* allocator,
                              std::string_view message, google::protobuf::MessageLite* rest,
                              NamedTensors* tensors);

}  // namespace tensorflux
