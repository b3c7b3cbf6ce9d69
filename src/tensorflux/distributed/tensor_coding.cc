#include "tensorflux/distributed/tensor_coding.h"

#include <cstring>
#include <string>
#include <vector>

#include "grpcpp/support/slice.h"
#include "tensorflux/worker.pb.h"

namespace tensorflux {
namespace {

// Protobuf wire types and the tags used here: (field << 3) | wire type.
constexpr uint32_t kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;
constexpr uint32_t Tag(uint32_t field, uint32_t wire_type) { return (field << 3) | wire_type; }
// RecvTensorResponse
constexpr uint32_t kResponseTensor = 1, kResponseIsDead = 2, kResponseSendStart = 3;
// TensorProto
constexpr uint32_t kTensorDtype = 1, kTensorShape = 2, kTensorContent = 4;

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

std::string ShapeBytes(const TensorShape& shape) {
  TensorShapeProto p;
  shape.AsProto(&p);
  return p.SerializeAsString();
}

// The TensorProto's size before its content bytes, and the whole message's size.
struct Layout {
  uint64_t content_bytes = 0;
  uint64_t tensor_proto_bytes = 0;
  uint64_t total_bytes = 0;
};

Layout LayoutFor(DataType dtype, size_t shape_bytes, uint64_t content_bytes, bool is_dead,
                 int64_t send_start_micros) {
  Layout l;
  l.content_bytes = content_bytes;
  l.tensor_proto_bytes = 1 + VarintSize(static_cast<uint64_t>(dtype));
  l.tensor_proto_bytes += 1 + VarintSize(shape_bytes) + shape_bytes;
  if (content_bytes > 0) l.tensor_proto_bytes += 1 + VarintSize(content_bytes) + content_bytes;
  l.total_bytes = 1 + VarintSize(l.tensor_proto_bytes) + l.tensor_proto_bytes;
  if (is_dead) l.total_bytes += 2;
  if (send_start_micros != 0) {
    l.total_bytes += 1 + VarintSize(static_cast<uint64_t>(send_start_micros));
  }
  return l;
}

Status CheckLimit(uint64_t total, uint64_t content, int64_t limit) {
  const int64_t max = limit < 0 ? kMaxGrpcMessageBytes : std::min(limit, kMaxGrpcMessageBytes);
  if (total <= static_cast<uint64_t>(max)) return OkStatus();
  return errors::ResourceExhausted(
      "A tensor of ", content, " bytes makes a RecvTensor response of ", total,
      " bytes, over the limit of ", max, " bytes",
      max == kMaxGrpcMessageBytes ? " (gRPC messages are at most 2^31-1 bytes)"
                                  : " (the channel's max_message_size)");
}

void DestroyTensorRef(void* t) { delete static_cast<Tensor*>(t); }

// Reads protobuf fields across the slices of a received message without joining them.
class SliceReader {
 public:
  explicit SliceReader(const std::vector<grpc::Slice>* slices) : slices_(slices) { Settle(); }

  uint64_t position() const { return pos_; }
  bool AtEnd() const { return slice_ >= slices_->size(); }

  bool ReadByte(uint8_t* b) {
    if (AtEnd()) return false;
    *b = (*slices_)[slice_].begin()[offset_];
    Advance(1);
    return true;
  }

  bool ReadVarint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!ReadByte(&b)) return false;
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }

  // Copies the next n bytes to `dst` (nullptr: skips them).
  bool Read(uint64_t n, char* dst) {
    while (n > 0) {
      if (AtEnd()) return false;
      const grpc::Slice& s = (*slices_)[slice_];
      const uint64_t take = std::min<uint64_t>(n, s.size() - offset_);
      if (dst != nullptr) {
        std::memcpy(dst, s.begin() + offset_, take);
        dst += take;
      }
      Advance(take);
      n -= take;
    }
    return true;
  }

  bool ReadString(uint64_t n, std::string* out) {
    if (n > kMaxGrpcMessageBytes) return false;
    out->resize(n);
    return Read(n, out->data());
  }

  // Skips one field's value of `wire_type`.
  bool SkipField(uint32_t wire_type) {
    uint64_t v;
    switch (wire_type) {
      case kVarint:
        return ReadVarint(&v);
      case kFixed64:
        return Read(8, nullptr);
      case kLengthDelimited:
        return ReadVarint(&v) && Read(v, nullptr);
      case kFixed32:
        return Read(4, nullptr);
      default:
        return false;  // groups are not used by these messages
    }
  }

 private:
  void Advance(uint64_t n) {
    offset_ += n;
    pos_ += n;
    Settle();
  }
  // Moves past exhausted (and empty) slices.
  void Settle() {
    while (slice_ < slices_->size() && offset_ >= (*slices_)[slice_].size()) {
      offset_ = 0;
      ++slice_;
    }
  }

  const std::vector<grpc::Slice>* slices_;
  size_t slice_ = 0;
  uint64_t offset_ = 0;
  uint64_t pos_ = 0;
};

Status Malformed(const char* what) {
  return errors::DataLoss("Malformed RecvTensor response: ", what);
}

// Parses the TensorProto of `len` bytes at `r` into `out`. Fast path: dtype and shape, then
// tensor_content copied into a fresh tensor. Otherwise the bytes are parsed as a TensorProto.
Status DecodeTensor(SliceReader r, uint64_t len, Allocator* allocator, Tensor* out) {
  const SliceReader start = r;
  const uint64_t end = r.position() + len;
  uint64_t dtype = 0;
  std::string shape_bytes;
  bool have_shape = false, fast = true, have_content = false;
  while (r.position() < end && fast) {
    uint64_t tag;
    if (!r.ReadVarint(&tag)) return Malformed("truncated tensor field");
    const uint32_t field = static_cast<uint32_t>(tag >> 3), wire = tag & 7;
    if (field == kTensorDtype && wire == kVarint) {
      if (!r.ReadVarint(&dtype)) return Malformed("truncated dtype");
    } else if (field == kTensorShape && wire == kLengthDelimited && !have_shape) {
      uint64_t n;
      if (!r.ReadVarint(&n) || n > end - r.position() || !r.ReadString(n, &shape_bytes)) {
        return Malformed("truncated shape");
      }
      have_shape = true;
    } else if (field == kTensorContent && wire == kLengthDelimited && dtype != 0 &&
               !have_content && DataTypeCanUseMemcpy(static_cast<DataType>(dtype))) {
      uint64_t n;
      if (!r.ReadVarint(&n) || n > end - r.position()) return Malformed("truncated content");
      TensorShapeProto sp;
      if (!sp.ParseFromString(shape_bytes)) return Malformed("bad tensor_shape");
      TX_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromProto(sp));
      TX_ASSIGN_OR_RETURN(Tensor t,
                          Tensor::Allocate(static_cast<DataType>(dtype), shape, allocator));
      if (n != t.TotalBytes()) {
        return errors::DataLoss("RecvTensor response: tensor_content has ", n,
                                " bytes, but a ", DataTypeString(t.dtype()), " tensor of shape ",
                                shape.DebugString(), " has ", t.TotalBytes());
      }
      if (!r.Read(n, static_cast<char*>(t.raw_data()))) return Malformed("truncated content");
      *out = std::move(t);
      have_content = true;
    } else {
      fast = false;  // another field (or order): parse the general way
    }
  }
  if (fast && r.position() != end) return Malformed("tensor overruns its length");
  if (fast && have_content) return OkStatus();
  // General path (strings, typed fields, no content: an empty or zero-element tensor).
  std::string bytes;
  SliceReader whole = start;
  if (!whole.ReadString(len, &bytes)) return Malformed("truncated tensor");
  TensorProto proto;
  if (!proto.ParseFromString(bytes)) return Malformed("bad TensorProto");
  TX_ASSIGN_OR_RETURN(*out, Tensor::FromProto(proto, allocator));
  return OkStatus();
}

}  // namespace

Status CheckRecvTensorResponseSize(DataType dtype, const TensorShape& shape, int64_t limit) {
  const uint64_t content =
      static_cast<uint64_t>(shape.num_elements()) * static_cast<uint64_t>(DataTypeSize(dtype));
  const Layout l = LayoutFor(dtype, ShapeBytes(shape).size(), content, /*is_dead=*/true,
                             /*send_start_micros=*/1);
  return CheckLimit(l.total_bytes, content, limit);
}

Status EncodeRecvTensorResponse(const TensorResponse& response, int64_t limit,
                                grpc::ByteBuffer* out) {
  const Tensor& t = response.tensor;
  if (!t.IsInitialized()) {
    return errors::InvalidArgument("RecvTensor: cannot encode an uninitialized tensor");
  }
  if (!DataTypeCanUseMemcpy(t.dtype())) {
    RecvTensorResponse proto;
    t.AsProtoField(proto.mutable_tensor());
    proto.set_is_dead(response.is_dead);
    proto.set_send_start_micros(response.send_start_micros);
    const size_t size = proto.ByteSizeLong();
    TX_RETURN_IF_ERROR(CheckLimit(size, size, limit));
    std::string bytes = proto.SerializeAsString();
    grpc::Slice slice(bytes);
    *out = grpc::ByteBuffer(&slice, 1);
    return OkStatus();
  }
  const std::string shape = ShapeBytes(t.shape());
  const uint64_t content = t.TotalBytes();
  const Layout l =
      LayoutFor(t.dtype(), shape.size(), content, response.is_dead, response.send_start_micros);
  TX_RETURN_IF_ERROR(CheckLimit(l.total_bytes, content, limit));

  std::string head;
  head.reserve(32 + shape.size() + (content <= kInlineTensorBytes ? content : 0));
  PutVarint(&head, Tag(kResponseTensor, kLengthDelimited));
  PutVarint(&head, l.tensor_proto_bytes);
  PutVarint(&head, Tag(kTensorDtype, kVarint));
  PutVarint(&head, static_cast<uint64_t>(t.dtype()));
  PutVarint(&head, Tag(kTensorShape, kLengthDelimited));
  PutVarint(&head, shape.size());
  head += shape;
  if (content > 0) {
    PutVarint(&head, Tag(kTensorContent, kLengthDelimited));
    PutVarint(&head, content);
  }
  std::string tail;
  if (response.is_dead) {
    PutVarint(&tail, Tag(kResponseIsDead, kVarint));
    PutVarint(&tail, 1);
  }
  if (response.send_start_micros != 0) {
    PutVarint(&tail, Tag(kResponseSendStart, kVarint));
    PutVarint(&tail, static_cast<uint64_t>(response.send_start_micros));
  }
  std::vector<grpc::Slice> slices;
  if (content <= kInlineTensorBytes) {
    head.append(static_cast<const char*>(t.raw_data()), content);
    head += tail;
    slices.emplace_back(head);
  } else {
    slices.emplace_back(head);
    // The slice keeps a reference to the tensor's buffer until gRPC has written it.
    slices.emplace_back(t.raw_data(), content, &DestroyTensorRef, new Tensor(t));
    if (!tail.empty()) slices.emplace_back(tail);
  }
  *out = grpc::ByteBuffer(slices.data(), slices.size());
  return OkStatus();
}

Status DecodeRecvTensorResponse(const grpc::ByteBuffer& buffer, Allocator* allocator,
                                TensorResponse* response) {
  std::vector<grpc::Slice> slices;
  if (!buffer.Dump(&slices).ok()) return Malformed("unreadable buffer");
  SliceReader r(&slices);
  *response = TensorResponse();
  bool have_tensor = false;
  while (!r.AtEnd()) {
    uint64_t tag;
    if (!r.ReadVarint(&tag)) return Malformed("truncated field tag");
    const uint32_t field = static_cast<uint32_t>(tag >> 3), wire = tag & 7;
    uint64_t v = 0;
    if (field == kResponseTensor && wire == kLengthDelimited) {
      if (!r.ReadVarint(&v)) return Malformed("truncated tensor length");
      TX_RETURN_IF_ERROR(DecodeTensor(r, v, allocator, &response->tensor));
      if (!r.Read(v, nullptr)) return Malformed("truncated tensor");
      have_tensor = true;
    } else if (field == kResponseIsDead && wire == kVarint) {
      if (!r.ReadVarint(&v)) return Malformed("truncated is_dead");
      response->is_dead = v != 0;
    } else if (field == kResponseSendStart && wire == kVarint) {
      if (!r.ReadVarint(&v)) return Malformed("truncated send_start_micros");
      response->send_start_micros = static_cast<int64_t>(v);
    } else if (!r.SkipField(wire)) {
      return Malformed("bad field");
    }
  }
  if (!have_tensor) return Malformed("no tensor");
  return OkStatus();
}

}  // namespace tensorflux
