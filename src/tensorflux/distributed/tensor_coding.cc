#include "tensorflux/distributed/tensor_coding.h"

#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "grpcpp/support/slice.h"
#include "tensorflux/distributed/wire_coding.h"
#include "tensorflux/worker.pb.h"

namespace tensorflux {
namespace {

using wire::kLengthDelimited;
using wire::kVarint;
using wire::PutVarint;
using wire::SliceReader;
using wire::Tag;
using wire::VarintSize;

// RecvTensorResponse
constexpr uint32_t kResponseTensor = 1, kResponseIsDead = 2, kResponseSendStart = 3;
// TensorProto
constexpr uint32_t kTensorDtype = 1, kTensorShape = 2, kTensorContent = 4;

std::string ShapeBytes(const TensorShape& shape) {
  TensorShapeProto p;
  shape.AsProto(&p);
  return p.SerializeAsString();
}

uint64_t FieldSize(uint64_t payload) { return 1 + VarintSize(payload) + payload; }

// A TensorProto's encoding: `head` holds its bytes up to and including tensor_content's tag and
// length; the content follows from the tensor's own buffer (`content` bytes). For dtypes that
// are not memcpy-able (string, ...) `head` is the whole TensorProto and `content` is 0.
struct EncodedTensorProto {
  std::string head;
  uint64_t content = 0;
  uint64_t size() const { return head.size() + content; }
};

uint64_t ContentBytes(DataType dtype, const TensorShape& shape) {
  return static_cast<uint64_t>(shape.num_elements()) * static_cast<uint64_t>(DataTypeSize(dtype));
}

// The size of a memcpy-able tensor's TensorProto, from its dtype and shape alone.
uint64_t TensorProtoSize(DataType dtype, size_t shape_bytes, uint64_t content) {
  uint64_t n = 1 + VarintSize(static_cast<uint64_t>(dtype)) + FieldSize(shape_bytes);
  return content > 0 ? n + FieldSize(content) : n;
}

EncodedTensorProto EncodeTensorProto(const Tensor& t) {
  EncodedTensorProto e;
  if (!DataTypeCanUseMemcpy(t.dtype())) {
    TensorProto proto;
    t.AsProtoField(&proto);
    e.head = proto.SerializeAsString();
    return e;
  }
  const std::string shape = ShapeBytes(t.shape());
  e.content = t.TotalBytes();
  e.head.reserve(24 + shape.size());
  PutVarint(&e.head, Tag(kTensorDtype, kVarint));
  PutVarint(&e.head, static_cast<uint64_t>(t.dtype()));
  PutVarint(&e.head, Tag(kTensorShape, kLengthDelimited));
  PutVarint(&e.head, shape.size());
  e.head += shape;
  if (e.content > 0) {
    PutVarint(&e.head, Tag(kTensorContent, kLengthDelimited));
    PutVarint(&e.head, e.content);
  }
  return e;
}

Status CheckLimit(uint64_t total, uint64_t content, int64_t limit, std::string_view what) {
  const int64_t max = limit < 0 ? kMaxGrpcMessageBytes : std::min(limit, kMaxGrpcMessageBytes);
  if (total <= static_cast<uint64_t>(max)) return OkStatus();
  return errors::ResourceExhausted(
      "A tensor of ", content, " bytes makes a ", what, " of ", total,
      " bytes, over the limit of ", max, " bytes",
      max == kMaxGrpcMessageBytes ? " (gRPC messages are at most 2^31-1 bytes)"
                                  : " (the channel's max_message_size)");
}

// Assembles a message from bytes and tensor buffers: bytes accumulate in `bytes()` and become
// one slice each time a tensor's buffer is added as a slice of its own (holding a reference to
// the tensor until gRPC has sent it). Tensors of at most kInlineTensorBytes are copied instead.
class FrameBuilder {
 public:
  std::string* bytes() { return &pending_; }

  void AddTensorContent(const Tensor& t) {
    const size_t n = t.TotalBytes();
    if (n <= kInlineTensorBytes) {
      pending_.append(static_cast<const char*>(t.raw_data()), n);
      return;
    }
    Flush();
    slices_.push_back(wire::TensorBytesSlice(t, 0, n));
  }

  // Appends a TensorProto as field `field` of the message being built.
  void AddTensorProtoField(uint32_t field, const Tensor& t, const EncodedTensorProto& e) {
    PutVarint(&pending_, Tag(field, kLengthDelimited));
    PutVarint(&pending_, e.size());
    pending_ += e.head;
    if (e.content > 0) AddTensorContent(t);
  }

  grpc::ByteBuffer Finish() {
    Flush();
    return grpc::ByteBuffer(slices_.data(), slices_.size());
  }

 private:
  void Flush() {
    if (pending_.empty()) return;
    slices_.emplace_back(pending_);
    pending_.clear();
  }

  std::string pending_;
  std::vector<grpc::Slice> slices_;
};

// `message` names the message being decoded ("RecvTensor response", "RunStep request", ...).
Status Malformed(std::string_view message, const char* what) {
  return errors::DataLoss("Malformed ", message, ": ", what);
}

// Parses the TensorProto of `len` bytes at `r` into `out`. Fast path: dtype and shape, then
// tensor_content copied into a fresh tensor. Otherwise the bytes are parsed as a TensorProto.
Status DecodeTensor(SliceReader r, uint64_t len, Allocator* allocator, std::string_view message,
                    Tensor* out) {
  const SliceReader start = r;
  const uint64_t end = r.position() + len;
  uint64_t dtype = 0;
  std::string shape_bytes;
  bool have_shape = false, fast = true, have_content = false;
  while (r.position() < end && fast) {
    uint64_t tag;
    if (!r.ReadVarint(&tag)) return Malformed(message, "truncated tensor field");
    const uint32_t field = static_cast<uint32_t>(tag >> 3), wire = tag & 7;
    if (field == kTensorDtype && wire == kVarint) {
      if (!r.ReadVarint(&dtype)) return Malformed(message, "truncated dtype");
    } else if (field == kTensorShape && wire == kLengthDelimited && !have_shape) {
      uint64_t n;
      if (!r.ReadVarint(&n) || n > end - r.position() || !r.ReadString(n, &shape_bytes)) {
        return Malformed(message, "truncated shape");
      }
      have_shape = true;
    } else if (field == kTensorContent && wire == kLengthDelimited && dtype != 0 &&
               !have_content && DataTypeCanUseMemcpy(static_cast<DataType>(dtype))) {
      uint64_t n;
      if (!r.ReadVarint(&n) || n > end - r.position()) {
        return Malformed(message, "truncated content");
      }
      TensorShapeProto sp;
      if (!sp.ParseFromString(shape_bytes)) return Malformed(message, "bad tensor_shape");
      TX_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromProto(sp));
      TX_ASSIGN_OR_RETURN(Tensor t,
                          Tensor::Allocate(static_cast<DataType>(dtype), shape, allocator));
      if (n != t.TotalBytes()) {
        return errors::DataLoss(message, ": tensor_content has ", n, " bytes, but a ",
                                DataTypeString(t.dtype()), " tensor of shape ",
                                shape.DebugString(), " has ", t.TotalBytes());
      }
      if (!r.Read(n, static_cast<char*>(t.raw_data()))) {
        return Malformed(message, "truncated content");
      }
      *out = std::move(t);
      have_content = true;
    } else {
      fast = false;  // another field (or order): parse the general way
    }
  }
  if (fast && r.position() != end) return Malformed(message, "tensor overruns its length");
  if (fast && have_content) return OkStatus();
  // General path (strings, typed fields, no content: an empty or zero-element tensor).
  std::string bytes;
  SliceReader whole = start;
  if (!whole.ReadString(len, &bytes)) return Malformed(message, "truncated tensor");
  TensorProto proto;
  if (!proto.ParseFromString(bytes)) return Malformed(message, "bad TensorProto");
  TX_ASSIGN_OR_RETURN(*out, Tensor::FromProto(proto, allocator));
  return OkStatus();
}

// Reads a length-delimited field's length at `r` and checks it fits in what is left.
bool ReadLength(SliceReader* r, uint64_t end, uint64_t* len) {
  return r->ReadVarint(len) && *len <= end - r->position();
}

// Parses the NamedTensorProto of `len` bytes at `r` (name = 1, tensor = 2).
Status DecodeNamedTensor(SliceReader r, uint64_t len, Allocator* allocator,
                         std::string_view message, std::pair<std::string, Tensor>* out) {
  const uint64_t end = r.position() + len;
  bool have_tensor = false;
  while (r.position() < end) {
    uint64_t tag, n;
    if (!r.ReadVarint(&tag)) return Malformed(message, "truncated NamedTensorProto field");
    const uint32_t field = static_cast<uint32_t>(tag >> 3), wire = tag & 7;
    if (field == 1 && wire == kLengthDelimited) {
      if (!ReadLength(&r, end, &n) || !r.ReadString(n, &out->first)) {
        return Malformed(message, "truncated tensor name");
      }
    } else if (field == 2 && wire == kLengthDelimited && !have_tensor) {
      if (!ReadLength(&r, end, &n)) return Malformed(message, "truncated tensor");
      TX_RETURN_IF_ERROR(DecodeTensor(r, n, allocator, message, &out->second));
      r.Read(n, nullptr);
      have_tensor = true;
    } else if (!r.SkipField(wire) || r.position() > end) {
      return Malformed(message, "bad NamedTensorProto field");
    }
  }
  if (r.position() != end) return Malformed(message, "NamedTensorProto overruns its length");
  // A NamedTensorProto without a tensor holds a default TensorProto: a DT_INVALID tensor, which
  // no kernel takes.
  if (!have_tensor) return Malformed(message, "a named tensor without its tensor");
  return OkStatus();
}

Status DumpSlices(const grpc::ByteBuffer& buffer, std::string_view message,
                  std::vector<grpc::Slice>* slices) {
  if (!buffer.Dump(slices).ok()) return Malformed(message, "unreadable buffer");
  return OkStatus();
}

}  // namespace

Status CheckRecvTensorResponseSize(DataType dtype, const TensorShape& shape, int64_t limit) {
  const uint64_t content = ContentBytes(dtype, shape);
  const uint64_t tensor = TensorProtoSize(dtype, ShapeBytes(shape).size(), content);
  // With is_dead and a send_start_micros of up to 10 varint bytes.
  const uint64_t total = FieldSize(tensor) + 2 + 11;
  return CheckLimit(total, content, limit, "RecvTensor response");
}

Status EncodeRecvTensorResponse(const TensorResponse& response, int64_t limit,
                                grpc::ByteBuffer* out) {
  const Tensor& t = response.tensor;
  if (!t.IsInitialized()) {
    return errors::InvalidArgument("RecvTensor: cannot encode an uninitialized tensor");
  }
  const EncodedTensorProto e = EncodeTensorProto(t);
  FrameBuilder b;
  b.AddTensorProtoField(kResponseTensor, t, e);
  // The tail is written before the content is counted: the size check needs the whole message.
  std::string tail;
  if (response.is_dead) {
    PutVarint(&tail, Tag(kResponseIsDead, kVarint));
    PutVarint(&tail, 1);
  }
  if (response.send_start_micros != 0) {
    PutVarint(&tail, Tag(kResponseSendStart, kVarint));
    PutVarint(&tail, static_cast<uint64_t>(response.send_start_micros));
  }
  TX_RETURN_IF_ERROR(
      CheckLimit(FieldSize(e.size()) + tail.size(), e.content, limit, "RecvTensor response"));
  *b.bytes() += tail;
  *out = b.Finish();
  return OkStatus();
}

Status DecodeRecvTensorResponse(const grpc::ByteBuffer& buffer, Allocator* allocator,
                                TensorResponse* response) {
  constexpr std::string_view kMessage = "RecvTensor response";
  std::vector<grpc::Slice> slices;
  TX_RETURN_IF_ERROR(DumpSlices(buffer, kMessage, &slices));
  SliceReader r(&slices);
  *response = TensorResponse();
  bool have_tensor = false;
  while (!r.AtEnd()) {
    uint64_t tag;
    if (!r.ReadVarint(&tag)) return Malformed(kMessage, "truncated field tag");
    const uint32_t field = static_cast<uint32_t>(tag >> 3), wire = tag & 7;
    uint64_t v = 0;
    if (field == kResponseTensor && wire == kLengthDelimited) {
      if (!r.ReadVarint(&v)) return Malformed(kMessage, "truncated tensor length");
      TX_RETURN_IF_ERROR(DecodeTensor(r, v, allocator, kMessage, &response->tensor));
      if (!r.Read(v, nullptr)) return Malformed(kMessage, "truncated tensor");
      have_tensor = true;
    } else if (field == kResponseIsDead && wire == kVarint) {
      if (!r.ReadVarint(&v)) return Malformed(kMessage, "truncated is_dead");
      response->is_dead = v != 0;
    } else if (field == kResponseSendStart && wire == kVarint) {
      if (!r.ReadVarint(&v)) return Malformed(kMessage, "truncated send_start_micros");
      response->send_start_micros = static_cast<int64_t>(v);
    } else if (!r.SkipField(wire)) {
      return Malformed(kMessage, "bad field");
    }
  }
  if (!have_tensor) return Malformed(kMessage, "no tensor");
  return OkStatus();
}

Status EncodeWithNamedTensors(const google::protobuf::MessageLite& rest, int field,
                              const NamedTensors& tensors, int64_t limit, std::string_view message,
                              grpc::ByteBuffer* out) {
  FrameBuilder b;
  if (!rest.SerializeToString(b.bytes())) {
    return errors::Internal("Cannot serialize the ", message);
  }
  uint64_t total = b.bytes()->size(), content = 0;
  for (const auto& [name, t] : tensors) {
    if (!t.IsInitialized()) {
      return errors::InvalidArgument(message, ": tensor '", name, "' is uninitialized");
    }
    const EncodedTensorProto e = EncodeTensorProto(t);
    const uint64_t named = FieldSize(name.size()) + FieldSize(e.size());
    total += FieldSize(named);
    content += e.content;
    TX_RETURN_IF_ERROR(CheckLimit(total, content, limit, message));
    std::string* bytes = b.bytes();
    PutVarint(bytes, Tag(static_cast<uint32_t>(field), kLengthDelimited));
    PutVarint(bytes, named);
    PutVarint(bytes, Tag(1, kLengthDelimited));
    PutVarint(bytes, name.size());
    *bytes += name;
    b.AddTensorProtoField(2, t, e);
  }
  *out = b.Finish();
  return OkStatus();
}

Status DecodeWithNamedTensors(const grpc::ByteBuffer& buffer, int field, Allocator* allocator,
                              std::string_view message, google::protobuf::MessageLite* rest,
                              NamedTensors* tensors) {
  std::vector<grpc::Slice> slices;
  TX_RETURN_IF_ERROR(DumpSlices(buffer, message, &slices));
  SliceReader r(&slices);
  tensors->clear();
  std::string other;  // every other field's bytes, parsed into `rest` at the end
  while (!r.AtEnd()) {
    SliceReader field_start = r;
    uint64_t tag, n;
    if (!r.ReadVarint(&tag)) return Malformed(message, "truncated field tag");
    const uint32_t number = static_cast<uint32_t>(tag >> 3), wire = tag & 7;
    if (number == static_cast<uint32_t>(field) && wire == kLengthDelimited) {
      if (!r.ReadVarint(&n)) return Malformed(message, "truncated named tensor length");
      tensors->emplace_back();
      TX_RETURN_IF_ERROR(DecodeNamedTensor(r, n, allocator, message, &tensors->back()));
      if (!r.Read(n, nullptr)) return Malformed(message, "truncated named tensor");
      continue;
    }
    if (!r.SkipField(wire)) return Malformed(message, "truncated or bad field");
    const uint64_t size = r.position() - field_start.position();
    const size_t at = other.size();
    other.resize(at + size);
    field_start.Read(size, other.data() + at);
  }
  rest->Clear();
  if (!rest->ParseFromString(other)) return Malformed(message, "bad fields");
  return OkStatus();
}

}  // namespace tensorflux
