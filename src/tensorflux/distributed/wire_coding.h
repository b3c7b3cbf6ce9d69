// Protobuf wire-format helpers shared by the hand-written codecs of distributed/ (tensor_coding,
// recv_tensor_stream): varints, tags, and a reader of protobuf fields across the slices of a
// received gRPC message that never joins them. Internal to distributed/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "grpcpp/support/slice.h"
#include "tensorflux/core/tensor.h"

namespace tensorflux::wire {

// Protobuf wire types and the tags used here: (field << 3) | wire type.
inline constexpr uint32_t kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;
// The longest string ReadString reads: gRPC's message limit, 2^31-1 bytes.
inline constexpr uint64_t kMaxStringBytes = 2147483647;

constexpr uint32_t Tag(uint32_t field, uint32_t wire_type) { return (field << 3) | wire_type; }

inline size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

inline void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

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
    if (n > kMaxStringBytes) return false;
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

// `n` bytes of `t`'s buffer from `offset` as a gRPC slice that holds a reference to the tensor
// until gRPC is done with it (no copy).
inline grpc::Slice TensorBytesSlice(const Tensor& t, size_t offset, size_t n) {
  return grpc::Slice(static_cast<char*>(t.raw_data()) + offset, n,
                     [](void* ref) { delete static_cast<Tensor*>(ref); }, new Tensor(t));
}

}  // namespace tensorflux::wire
