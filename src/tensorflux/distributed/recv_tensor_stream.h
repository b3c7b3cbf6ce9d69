// RecvTensorStream's messages (worker_service.proto; worker.proto's RecvTensorStreamRequest and
// RecvTensorChunk): RecvTensor's response cut into pieces, so that the receiver copies each
// piece of the tensor into its one allocation while the next pieces are still on the wire. A
// unary RecvTensor response arrives whole before anything can be done with it (gRPC hands over
// a message only once all of it is in), so its copy into the tensor cannot overlap the
// transfer.
//
// The stream: a header message (RecvTensorChunk.response: the RecvTensorResponse with the
// tensor's dtype and shape but no content, plus content_bytes, the size of tensor_content),
// then content_bytes bytes of tensor_content in pieces of at most chunk_bytes, in order
// (RecvTensorChunk.offset, .data; data is a slice of the sender's tensor buffer, no copy). A
// tensor whose dtype is not plain bytes (string, resource, variant) or that has no content
// (zero elements) travels whole in the header, with content_bytes 0.
//
// The receiver (RecvTensorAssembler) checks every message: the header comes first and once,
// content_bytes is what dtype and shape make, each piece starts where the previous one ended
// (a missing or repeated piece shows as a wrong offset), is not empty and does not run past
// content_bytes, and the stream ends only once all content arrived. Any other stream is
// DATA_LOSS naming `what` (the caller passes the rendezvous key); the tensor is allocated
// once, when the header arrives (RESOURCE_EXHAUSTED if it cannot be).
#pragma once

#include <cstdint>
#include <string>

#include "grpcpp/support/byte_buffer.h"
#include "tensorflux/core/allocator.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/distributed/worker_interface.h"

namespace tensorflux {

// The piece size for `content_bytes` when the request asks for none
// (RecvTensorStreamRequest.chunk_bytes 0): an eighth of the tensor, at least 512 KiB and at
// most 4 MiB, so that a tensor of a few MiB is still cut into several pieces to overlap.
int64_t DefaultRecvChunkBytes(uint64_t content_bytes);
// The largest piece a request may ask for (a message must fit gRPC's 2^31-1 byte limit).
inline constexpr int64_t kMaxRecvChunkBytes = 1 << 30;

// The header of the stream for `response` into `out`; `*content_bytes` is how many bytes of
// the tensor's buffer follow in pieces (EncodeRecvTensorPiece). INVALID_ARGUMENT for an
// uninitialized tensor; RESOURCE_EXHAUSTED when a whole-tensor header is over `limit` bytes
// (-1: 2^31-1).
Status EncodeRecvTensorHeader(const TensorResponse& response, int64_t limit,
                              grpc::ByteBuffer* out, uint64_t* content_bytes);

// The piece of `t`'s buffer of `n` bytes at `offset` (offset + n within t.TotalBytes()), as a
// RecvTensorChunk whose data is a slice of the buffer holding a reference to `t`.
grpc::ByteBuffer EncodeRecvTensorPiece(const Tensor& t, uint64_t offset, uint64_t n);

// Reassembles a stream into a TensorResponse. Not thread-safe (one stream's reads are
// sequential).
class RecvTensorAssembler {
 public:
  // `allocator`: where the tensor is allocated (nullptr: the CPU allocator); `what` names the
  // tensor in errors.
  RecvTensorAssembler(Allocator* allocator, std::string what);

  // Takes the next message of the stream: the header, then the pieces (see above).
  Status Add(const grpc::ByteBuffer& message);

  // After the stream ended without an error: the response, or DATA_LOSS when the header or
  // some of the content never came.
  Status Finish(TensorResponse* response);

  uint64_t content_bytes() const { return content_bytes_; }
  uint64_t received_bytes() const { return received_; }

 private:
  Status AddHeader(const grpc::ByteBuffer& message);
  Status AddPiece(const grpc::ByteBuffer& message);
  Status Lost(std::string_view why) const;

  Allocator* const allocator_;
  const std::string what_;
  bool have_header_ = false;
  TensorResponse response_;
  uint64_t content_bytes_ = 0;
  uint64_t received_ = 0;
};

}  // namespace tensorflux
