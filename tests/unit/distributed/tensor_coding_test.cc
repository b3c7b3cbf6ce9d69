// RecvTensorResponse coding: round trips for every kind of dtype (POD, string, empty, scalar,
// above and below the inline threshold), the bytes parse as an ordinary protobuf message, the
// zero-copy slice references the tensor's buffer, protobuf-encoded input in any field order is
// read, corrupt input is DATA_LOSS, and the 2^31-1 byte limit is refused without allocating.
#include "tensorflux/distributed/tensor_coding.h"

#include "distributed/coding_test_util.h"

#include <cstring>
#include <numeric>
#include <vector>

#include "gtest/gtest.h"
#include "grpcpp/support/slice.h"
#include "tensorflux/worker.pb.h"

namespace tensorflux {
namespace {

using coding_test::Chop;
using coding_test::ExpectSameTensor;
using coding_test::Flatten;
using coding_test::Iota;

// Encodes, checks the bytes against protobuf's own parser, decodes (whole and in 7-byte
// slices) and compares.
void RoundTrip(const Tensor& t, bool is_dead = false, int64_t micros = 0) {
  TensorResponse in;
  in.tensor = t;
  in.is_dead = is_dead;
  in.send_start_micros = micros;
  grpc::ByteBuffer buf;
  ASSERT_TRUE(EncodeRecvTensorResponse(in, -1, &buf).ok());
  const std::string bytes = Flatten(buf);
  RecvTensorResponse proto;
  ASSERT_TRUE(proto.ParseFromString(bytes));
  EXPECT_EQ(proto.tensor().dtype(), t.dtype());
  EXPECT_EQ(proto.is_dead(), is_dead);
  EXPECT_EQ(proto.send_start_micros(), micros);
  auto via_proto = Tensor::FromProto(proto.tensor());
  ASSERT_TRUE(via_proto.ok()) << via_proto.status();
  ExpectSameTensor(*via_proto, t);
  TensorResponse out;
  Status decoded = DecodeRecvTensorResponse(buf, nullptr, &out);
  ASSERT_TRUE(decoded.ok()) << decoded;
  ExpectSameTensor(out.tensor, t);
  EXPECT_EQ(out.is_dead, is_dead);
  EXPECT_EQ(out.send_start_micros, micros);
  TensorResponse chopped;
  Status s = DecodeRecvTensorResponse(Chop(bytes, 7), nullptr, &chopped);
  ASSERT_TRUE(s.ok()) << s;
  ExpectSameTensor(chopped.tensor, t);
}

TEST(TensorCodingTest, RoundTripsDtypesAndShapes) {
  RoundTrip(Iota<float>(TensorShape({2, 3}), 0.5f), /*is_dead=*/false, 1234567);
  RoundTrip(Iota<double>(TensorShape({5}), -2.0));
  RoundTrip(Iota<int32_t>(TensorShape({4, 100}), -7));     // 1600 bytes: a zero-copy slice
  RoundTrip(Iota<int64_t>(TensorShape({1000}), int64_t{1} << 40));
  RoundTrip(Iota<uint8_t>(TensorShape({3, 1, 2}), 250));
  RoundTrip(Iota<int8_t>(TensorShape({7}), -3));
  RoundTrip(Tensor::Scalar<bool>(true), /*is_dead=*/true);
  RoundTrip(Tensor::Scalar<float>(3.25f));
  RoundTrip(Tensor(DT_FLOAT, TensorShape({0, 4})));  // no elements: no content field
  RoundTrip(Tensor(DT_INT32, TensorShape({0})));
  Tensor s(DT_STRING, TensorShape({3}));
  s.flat<std::string>()[0] = "";
  s.flat<std::string>()[1] = "abc";
  s.flat<std::string>()[2] = std::string(3000, '\0') + "tail";
  RoundTrip(s);
  RoundTrip(Tensor(DT_STRING, TensorShape({0})));
}

TEST(TensorCodingTest, LargeTensorIsSentFromItsOwnBuffer) {
  Tensor t = Iota<float>(TensorShape({1 << 16}), 1.0f);  // 256 KiB
  TensorResponse in;
  in.tensor = t;
  grpc::ByteBuffer buf;
  ASSERT_TRUE(EncodeRecvTensorResponse(in, -1, &buf).ok());
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(buf.Dump(&slices).ok());
  ASSERT_EQ(slices.size(), 2u);  // header, content (no tail: not dead, no time)
  EXPECT_EQ(static_cast<const void*>(slices[1].begin()), t.raw_data());
  EXPECT_EQ(slices[1].size(), t.TotalBytes());
  EXPECT_FALSE(t.RefCountIsOne());  // the slice holds a reference
  slices.clear();
  buf.Clear();
  in.tensor = Tensor();
  EXPECT_TRUE(t.RefCountIsOne());
  RoundTrip(t, true, 99);
}

TEST(TensorCodingTest, ReadsProtobufEncodedMessagesInAnyOrder) {
  // As another encoder would write it: typed fields instead of tensor_content.
  RecvTensorResponse proto;
  Tensor t = Iota<int32_t>(TensorShape({2, 2}), 5);
  t.AsProtoField(proto.mutable_tensor());
  proto.set_is_dead(true);
  TensorResponse out;
  ASSERT_TRUE(DecodeRecvTensorResponse(Chop(proto.SerializeAsString(), 3), nullptr, &out).ok());
  ExpectSameTensor(out.tensor, t);
  EXPECT_TRUE(out.is_dead);
  // tensor_content before dtype and shape; unknown fields in between are skipped.
  TensorProto tp;
  t.AsProtoTensorContent(&tp);
  std::string inner;
  {
    TensorProto content_only;
    content_only.set_tensor_content(tp.tensor_content());
    TensorProto rest;
    rest.set_dtype(tp.dtype());
    *rest.mutable_tensor_shape() = tp.tensor_shape();
    inner = content_only.SerializeAsString() + rest.SerializeAsString();
  }
  std::string outer;
  outer.push_back(0x0a);
  outer.push_back(static_cast<char>(inner.size()));
  outer += inner;
  outer += std::string("\xa0\x06\x05", 3);  // field 100, varint 5: unknown, skipped
  ASSERT_TRUE(DecodeRecvTensorResponse(Chop(outer, 5), nullptr, &out).ok());
  ExpectSameTensor(out.tensor, t);
  EXPECT_FALSE(out.is_dead);
}

TEST(TensorCodingTest, CorruptInputIsDataLoss) {
  Tensor t = Iota<float>(TensorShape({300}), 0.0f);
  TensorResponse in;
  in.tensor = t;
  grpc::ByteBuffer buf;
  ASSERT_TRUE(EncodeRecvTensorResponse(in, -1, &buf).ok());
  const std::string bytes = Flatten(buf);
  TensorResponse out;
  for (size_t cut : {size_t{1}, size_t{5}, bytes.size() / 2, bytes.size() - 1}) {
    Status s = DecodeRecvTensorResponse(Chop(bytes.substr(0, cut), 64), nullptr, &out);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << "cut at " << cut << ": " << s;
  }
  EXPECT_EQ(DecodeRecvTensorResponse(Chop("", 1), nullptr, &out).code(),
            absl::StatusCode::kDataLoss);  // no tensor
  EXPECT_EQ(DecodeRecvTensorResponse(Chop("\x0f", 1), nullptr, &out).code(),
            absl::StatusCode::kDataLoss);  // wire type 7
  // Content of the wrong size for dtype and shape.
  TensorProto tp;
  Tensor(DT_FLOAT, TensorShape({4})).AsProtoTensorContent(&tp);
  tp.set_tensor_content(std::string(12, '\0'));
  RecvTensorResponse proto;
  *proto.mutable_tensor() = tp;
  Status s = DecodeRecvTensorResponse(Chop(proto.SerializeAsString(), 100), nullptr, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(std::string(s.message()).find("has 12 bytes"), std::string::npos) << s;
  // A negative dimension is the shape's INVALID_ARGUMENT.
  tp.mutable_tensor_shape()->mutable_dim(0)->set_size(-4);
  *proto.mutable_tensor() = tp;
  s = DecodeRecvTensorResponse(Chop(proto.SerializeAsString(), 100), nullptr, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(TensorCodingTest, SizeLimits) {
  // 2^31 bytes of uint8: over gRPC's limit, refused from the shape alone (nothing allocated).
  Status s = CheckRecvTensorResponseSize(DT_UINT8, TensorShape({int64_t{1} << 31}), -1);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(std::string(s.message()).find("2147483648 bytes"), std::string::npos) << s;
  EXPECT_NE(std::string(s.message()).find("2^31-1"), std::string::npos) << s;
  // Just under the limit (2 GiB less 64 bytes of framing headroom) is fine.
  EXPECT_TRUE(
      CheckRecvTensorResponseSize(DT_UINT8, TensorShape({(int64_t{1} << 31) - 64}), -1).ok());
  // A channel limit below the tensor's size.
  EXPECT_EQ(CheckRecvTensorResponseSize(DT_FLOAT, TensorShape({1024}), 4096).code(),
            absl::StatusCode::kResourceExhausted);
  TensorResponse in;
  in.tensor = Iota<float>(TensorShape({1024}), 0.0f);
  grpc::ByteBuffer buf;
  s = EncodeRecvTensorResponse(in, 4096, &buf);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(std::string(s.message()).find("max_message_size"), std::string::npos) << s;
  EXPECT_TRUE(EncodeRecvTensorResponse(in, 8192, &buf).ok());
  EXPECT_EQ(EncodeRecvTensorResponse(TensorResponse(), -1, &buf).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tensorflux
