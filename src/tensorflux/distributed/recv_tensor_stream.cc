#include "tensorflux/distributed/recv_tensor_stream.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "grpcpp/support/proto_buffer_reader.h"
#include "tensorflux/distributed/tensor_coding.h"
#include "tensorflux/distributed/wire_coding.h"
#include "tensorflux/worker.pb.h"

namespace tensorflux {
namespace {

// RecvTensorChunk's fields.
constexpr uint32_t kChunkResponse = 1, kChunkContentBytes = 2, kChunkOffset = 3, kChunkData = 4;

bool SendsContentInPieces(const Tensor& t) {
  return DataTypeCanUseMemcpy(t.dtype()) && DataTypeSize(t.dtype()) > 0 && t.TotalBytes() > 0;
}

}  // namespace

Status EncodeRecvTensorHeader(const TensorResponse& response, int64_t limit,
                              grpc::ByteBuffer* out, uint64_t* content_bytes) {
  const Tensor& t = response.tensor;
  if (!t.IsInitialized()) {
    return errors::InvalidArgument("RecvTensorStream: cannot encode an uninitialized tensor");
  }
  RecvTensorChunk header;
  RecvTensorResponse* r = header.mutable_response();
  r->set_is_dead(response.is_dead);
  r->set_send_start_micros(response.send_start_micros);
  *content_bytes = 0;
  if (SendsContentInPieces(t)) {
    r->mutable_tensor()->set_dtype(t.dtype());
    t.shape().AsProto(r->mutable_tensor()->mutable_tensor_shape());
    *content_bytes = t.TotalBytes();
    header.set_content_bytes(static_cast<int64_t>(*content_bytes));
  } else {
    t.AsProtoField(r->mutable_tensor());
  }
  const uint64_t size = header.ByteSizeLong();
  const int64_t max = limit < 0 ? kMaxGrpcMessageBytes : std::min(limit, kMaxGrpcMessageBytes);
  if (size > static_cast<uint64_t>(max)) {
    return errors::ResourceExhausted(
        "A ", DataTypeString(t.dtype()), " tensor of shape ", t.shape().DebugString(),
        " makes a RecvTensorStream header of ", size, " bytes, over the limit of ", max, " bytes");
  }
  grpc::Slice slice(header.SerializeAsString());
  *out = grpc::ByteBuffer(&slice, 1);
  return OkStatus();
}

grpc::ByteBuffer EncodeRecvTensorPiece(const Tensor& t, uint64_t offset, uint64_t n) {
  std::string head;
  wire::PutVarint(&head, wire::Tag(kChunkOffset, wire::kVarint));
  wire::PutVarint(&head, offset);
  wire::PutVarint(&head, wire::Tag(kChunkData, wire::kLengthDelimited));
  wire::PutVarint(&head, n);
  grpc::Slice slices[2] = {grpc::Slice(head), wire::TensorBytesSlice(t, offset, n)};
  return grpc::ByteBuffer(slices, 2);
}

int64_t DefaultRecvChunkBytes(uint64_t content_bytes) {
  return std::clamp<int64_t>(static_cast<int64_t>(content_bytes / 8), 512 << 10, 4 << 20);
}

RecvTensorAssembler::RecvTensorAssembler(Allocator* allocator, std::string what)
    : allocator_(allocator), what_(std::move(what)) {}

Status RecvTensorAssembler::Lost(std::string_view why) const {
  return errors::DataLoss("RecvTensorStream of ", what_, ": ", why);
}

Status RecvTensorAssembler::Add(const grpc::ByteBuffer& message) {
  return have_header_ ? AddPiece(message) : AddHeader(message);
}

Status RecvTensorAssembler::AddHeader(const grpc::ByteBuffer& message) {
  RecvTensorChunk header;
  grpc::ByteBuffer copy(message);  // shares the slices
  grpc::ProtoBufferReader reader(&copy);
  if (!header.ParseFromZeroCopyStream(&reader)) {
    return Lost("the first message is not a RecvTensorChunk");
  }
  if (!header.has_response() || header.offset() != 0 || !header.data().empty()) {
    return Lost("the first message is not a header (a response without data)");
  }
  if (header.content_bytes() < 0) {
    return Lost(absl::StrCat("negative content_bytes ", header.content_bytes()));
  }
  RecvTensorResponse* r = header.mutable_response();
  response_.is_dead = r->is_dead();
  response_.send_start_micros = r->send_start_micros();
  content_bytes_ = static_cast<uint64_t>(header.content_bytes());
  if (content_bytes_ == 0) {
    StatusOr<Tensor> t = Tensor::FromProto(r->tensor(), allocator_);
    if (!t.ok()) return Lost(absl::StrCat("bad tensor in the header: ", t.status().message()));
    response_.tensor = *std::move(t);
  } else {
    const TensorProto& p = r->tensor();
    const DataType dtype = p.dtype();
    if (!DataTypeIsSupported(dtype) || !DataTypeCanUseMemcpy(dtype) || DataTypeSize(dtype) == 0) {
      return Lost(absl::StrCat("content_bytes ", content_bytes_, " for a tensor of dtype ",
                               DataTypeString(dtype), ", whose content is not sent as bytes"));
    }
    TensorProto bare;
    bare.set_dtype(dtype);
    *bare.mutable_tensor_shape() = p.tensor_shape();
    if (p.ByteSizeLong() != bare.ByteSizeLong()) {
      return Lost("the header's tensor has content as well as content_bytes");
    }
    StatusOr<TensorShape> shape = TensorShape::FromProto(p.tensor_shape());
    if (!shape.ok()) return Lost(absl::StrCat("bad shape: ", shape.status().message()));
    const uint64_t expected =
        static_cast<uint64_t>(shape->num_elements()) * DataTypeSize(dtype);
    if (expected != content_bytes_) {
      return Lost(absl::StrCat("content_bytes is ", content_bytes_, ", but a ",
                               DataTypeString(dtype), " tensor of shape ", shape->DebugString(),
                               " has ", expected));
    }
    TX_ASSIGN_OR_RETURN(response_.tensor, Tensor::Allocate(dtype, *shape, allocator_));
  }
  have_header_ = true;
  return OkStatus();
}

Status RecvTensorAssembler::AddPiece(const grpc::ByteBuffer& message) {
  std::vector<grpc::Slice> slices;
  if (!message.Dump(&slices).ok()) return Lost("unreadable message");
  wire::SliceReader r(&slices);
  uint64_t offset = 0;
  bool have_data = false;
  while (!r.AtEnd()) {
    uint64_t tag, n;
    if (!r.ReadVarint(&tag)) return Lost("truncated field tag in a piece");
    const uint32_t field = static_cast<uint32_t>(tag >> 3), wire_type = tag & 7;
    if (field == kChunkResponse || field == kChunkContentBytes) {
      return Lost("a second header");
    } else if (field == kChunkOffset && wire_type == wire::kVarint && !have_data) {
      if (!r.ReadVarint(&offset)) return Lost("truncated offset");
    } else if (field == kChunkData && wire_type == wire::kLengthDelimited && !have_data) {
      if (!r.ReadVarint(&n)) return Lost("truncated data length");
      if (offset != received_) {
        return Lost(absl::StrCat("a piece at offset ", offset, " where ", received_,
                                 " was expected (a piece is missing or repeated)"));
      }
      if (n == 0 || n > content_bytes_ - received_) {
        return Lost(absl::StrCat("a piece of ", n, " bytes at offset ", offset, " of ",
                                 content_bytes_, " bytes of content"));
      }
      if (!r.Read(n, static_cast<char*>(response_.tensor.raw_data()) + offset)) {
        return Lost(absl::StrCat("a piece shorter than its length ", n));
      }
      received_ += n;
      have_data = true;
    } else if (field == kChunkOffset || field == kChunkData) {
      return Lost("a piece with a repeated field or its offset after its data");
    } else if (!r.SkipField(wire_type)) {
      return Lost("bad field in a piece");
    }
  }
  if (!have_data) return Lost("a piece without data");
  return OkStatus();
}

Status RecvTensorAssembler::Finish(TensorResponse* response) {
  if (!have_header_) return Lost("the stream ended before its header");
  if (received_ != content_bytes_) {
    return Lost(absl::StrCat("the stream ended after ", received_, " of ", content_bytes_,
                             " bytes of content"));
  }
  *response = std::move(response_);
  response_ = TensorResponse();
  return OkStatus();
}

}  // namespace tensorflux
