// Helpers of the wire-coding tests (tensor_coding_test.cc, named_tensor_coding_test.cc).
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"
#include "tensorflux/core/tensor.h"

namespace tensorflux::coding_test {

inline std::string Flatten(const grpc::ByteBuffer& b) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(b.Dump(&slices).ok());
  std::string out;
  for (const grpc::Slice& s : slices) {
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

// The same bytes cut into slices of `piece` bytes, as gRPC may deliver them.
inline grpc::ByteBuffer Chop(const std::string& bytes, size_t piece) {
  std::vector<grpc::Slice> slices;
  for (size_t i = 0; i < bytes.size(); i += piece) {
    slices.emplace_back(bytes.data() + i, std::min(piece, bytes.size() - i));
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

inline void ExpectSameTensor(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  if (a.dtype() == DT_STRING) {
    for (int64_t i = 0; i < a.NumElements(); ++i) {
      EXPECT_EQ(a.flat<std::string>()[i], b.flat<std::string>()[i]);
    }
  } else {
    ASSERT_EQ(a.TotalBytes(), b.TotalBytes());
    if (a.TotalBytes() > 0) {
      EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()), 0);
    }
  }
}

template <typename T>
Tensor Iota(const TensorShape& shape, T start) {
  std::vector<T> v(shape.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(start + static_cast<T>(i));
  return Tensor::FromVector<T>(absl::Span<const T>(v), shape);
}

}  // namespace tensorflux::coding_test
