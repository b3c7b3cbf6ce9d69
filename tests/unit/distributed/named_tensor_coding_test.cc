// Messages with named tensors (EncodeWithNamedTensors / DecodeWithNamedTensors) on RunStep's
// messages: the bytes are what protobuf reads (checked with protobuf's own parser and
// Tensor::FromProto), protobuf-written messages (typed *_val fields) are read, the content of
// a large tensor goes out as a slice of its own buffer, and truncated or corrupt bytes are
// DATA_LOSS naming the message.
#include <string>

#include "distributed/coding_test_util.h"
#include "gtest/gtest.h"
#include "tensorflux/distributed/tensor_coding.h"
#include "tensorflux/master.pb.h"

namespace tensorflux {
namespace {

using coding_test::Chop;
using coding_test::ExpectSameTensor;
using coding_test::Flatten;
using coding_test::Iota;

constexpr int kFeedField = 2;  // RunStepRequest.feed

NamedTensors SampleFeeds() {
  Tensor s(DT_STRING, TensorShape({2}));
  s.flat<std::string>()[0] = "";
  s.flat<std::string>()[1] = std::string(2000, 'x');
  return {{"big:0", Iota<float>(TensorShape({300, 7}), 0.25f)},  // 8400 bytes: its own slice
          {"small:0", Iota<int64_t>(TensorShape({3}), -1)},
          {"flag:0", Tensor::Scalar<bool>(true)},
          {"empty:0", Tensor(DT_FLOAT, TensorShape({0, 3}))},
          {"names:0", s},
          {"", Iota<uint8_t>(TensorShape({5}), 1)}};
}

RunStepRequest SampleRest() {
  RunStepRequest rest;
  rest.set_session_handle("abc");
  rest.add_fetch("y:0");
  rest.add_fetch("z:1");
  rest.add_target("train");
  rest.mutable_options()->set_timeout_in_ms(1234);
  rest.set_request_id(-5);
  return rest;
}

void ExpectSameRest(const RunStepRequest& a, const RunStepRequest& b) {
  EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString());
}

TEST(NamedTensorCodingTest, RoundTripsAndIsProtobuf) {
  const NamedTensors feeds = SampleFeeds();
  const RunStepRequest rest = SampleRest();
  grpc::ByteBuffer buf;
  Status s = EncodeWithNamedTensors(rest, kFeedField, feeds, -1, "RunStep request", &buf);
  ASSERT_TRUE(s.ok()) << s;
  // Protobuf's parser reads it: the same fields and tensors.
  RunStepRequest proto;
  ASSERT_TRUE(proto.ParseFromString(Flatten(buf)));
  ASSERT_EQ(proto.feed_size(), static_cast<int>(feeds.size()));
  for (size_t i = 0; i < feeds.size(); ++i) {
    EXPECT_EQ(proto.feed(i).name(), feeds[i].first);
    auto t = Tensor::FromProto(proto.feed(i).tensor());
    ASSERT_TRUE(t.ok()) << t.status();
    ExpectSameTensor(*t, feeds[i].second);
  }
  proto.clear_feed();
  ExpectSameRest(proto, rest);
  // Decoded whole and in 5-byte slices.
  for (const grpc::ByteBuffer& in : {buf, Chop(Flatten(buf), 5)}) {
    RunStepRequest got_rest;
    NamedTensors got;
    s = DecodeWithNamedTensors(in, kFeedField, nullptr, "RunStep request", &got_rest, &got);
    ASSERT_TRUE(s.ok()) << s;
    ExpectSameRest(got_rest, rest);
    ASSERT_EQ(got.size(), feeds.size());
    for (size_t i = 0; i < feeds.size(); ++i) {
      EXPECT_EQ(got[i].first, feeds[i].first);
      ExpectSameTensor(got[i].second, feeds[i].second);
    }
  }
}

TEST(NamedTensorCodingTest, LargeContentIsASliceOfTheTensor) {
  const Tensor t = Iota<int32_t>(TensorShape({4096}), 3);
  grpc::ByteBuffer buf;
  ASSERT_TRUE(
      EncodeWithNamedTensors(RunStepResponse(), 1, {{"t", t}}, -1, "RunStep response", &buf).ok());
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(buf.Dump(&slices).ok());
  ASSERT_EQ(slices.size(), 2u);  // framing, content
  EXPECT_EQ(static_cast<const void*>(slices[1].begin()), t.raw_data());
}

TEST(NamedTensorCodingTest, ReadsProtobufWrittenMessages) {
  // As a protobuf peer writes it: typed fields, tensor before name, fields interleaved.
  RunStepRequest proto = SampleRest();
  const Tensor a = Iota<int32_t>(TensorShape({2, 2}), 5);
  const Tensor b = Iota<double>(TensorShape({3}), 0.5);
  a.AsProtoField(proto.add_feed()->mutable_tensor());
  proto.mutable_feed(0)->set_name("a");
  b.AsProtoTensorContent(proto.add_feed()->mutable_tensor());
  proto.mutable_feed(1)->set_name("b");
  RunStepRequest got_rest;
  NamedTensors got;
  Status s = DecodeWithNamedTensors(Chop(proto.SerializeAsString(), 3), kFeedField, nullptr,
                                    "RunStep request", &got_rest, &got);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].first, "a");
  ExpectSameTensor(got[0].second, a);
  EXPECT_EQ(got[1].first, "b");
  ExpectSameTensor(got[1].second, b);
  proto.clear_feed();
  ExpectSameRest(got_rest, proto);
}

Status Decode(const std::string& bytes) {
  RunStepRequest rest;
  NamedTensors got;
  return DecodeWithNamedTensors(Chop(bytes, 4), kFeedField, nullptr, "RunStep request", &rest,
                                &got);
}

TEST(NamedTensorCodingTest, CorruptInputIsDataLoss) {
  grpc::ByteBuffer buf;
  ASSERT_TRUE(
      EncodeWithNamedTensors(SampleRest(), kFeedField, SampleFeeds(), -1, "RunStep request", &buf)
          .ok());
  const std::string bytes = Flatten(buf);
  // Every truncation is an error, never a crash (the cut after the last complete field is a
  // shorter valid message only at field boundaries, which a cut inside the feeds is not).
  for (size_t cut : {size_t{1}, size_t{7}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
    Status s = Decode(bytes.substr(0, cut));
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << cut << ": " << s;
    EXPECT_NE(std::string(s.message()).find("RunStep request"), std::string::npos) << s;
  }
  // A named tensor without its tensor.
  RunStepRequest no_tensor;
  no_tensor.add_feed()->set_name("x");
  EXPECT_EQ(Decode(no_tensor.SerializeAsString()).code(), absl::StatusCode::kDataLoss);
  // tensor_content that does not match dtype and shape.
  RunStepRequest short_content;
  Iota<float>(TensorShape({4}), 0.0f).AsProtoTensorContent(short_content.add_feed()->mutable_tensor());
  short_content.mutable_feed(0)->mutable_tensor()->mutable_tensor_content()->resize(12);
  Status s = Decode(short_content.SerializeAsString());
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(std::string(s.message()).find("has 16"), std::string::npos) << s;
  // A negative dimension: the shape's own error.
  RunStepRequest bad_shape;
  Iota<float>(TensorShape({4}), 0.0f).AsProtoTensorContent(bad_shape.add_feed()->mutable_tensor());
  bad_shape.mutable_feed(0)->mutable_tensor()->mutable_tensor_shape()->mutable_dim(0)->set_size(-4);
  EXPECT_EQ(Decode(bad_shape.SerializeAsString()).code(), absl::StatusCode::kInvalidArgument);
}

TEST(NamedTensorCodingTest, SizeLimitAndUninitializedTensor) {
  grpc::ByteBuffer buf;
  const NamedTensors feeds = {{"x", Iota<float>(TensorShape({1024}), 0.0f)}};
  Status s = EncodeWithNamedTensors(SampleRest(), kFeedField, feeds, 4096, "RunStep request", &buf);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(std::string(s.message()).find("RunStep request"), std::string::npos) << s;
  EXPECT_TRUE(
      EncodeWithNamedTensors(SampleRest(), kFeedField, feeds, 8192, "RunStep request", &buf).ok());
  s = EncodeWithNamedTensors(SampleRest(), kFeedField, {{"u", Tensor()}}, -1, "RunStep request",
                             &buf);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find("'u'"), std::string::npos) << s;
}

}  // namespace
}  // namespace tensorflux
