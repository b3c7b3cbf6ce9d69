// RecvTensorStream's messages (recv_tensor_stream.h) without gRPC: a tensor cut into pieces and
// reassembled equals the original for every kind of dtype and for sizes that are not a
// multiple of the piece size; the messages parse as ordinary RecvTensorChunk protobufs (and
// protobuf-written messages are read); the pieces reference the tensor's buffer; and every bad
// stream (missing, repeated, short, oversized or misplaced piece, a header that does not match
// its content, no header, a stream that ends early) is DATA_LOSS naming the tensor.
#include "tensorflux/distributed/recv_tensor_stream.h"

#include "distributed/coding_test_util.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensorflux/worker.pb.h"

namespace tensorflux {
namespace {

using coding_test::Chop;
using coding_test::ExpectSameTensor;
using coding_test::Flatten;
using coding_test::Iota;

constexpr char kKey[] = "edge_7;0:0";

// The stream's messages for `t`: the header, then pieces of at most `chunk` bytes.
std::vector<grpc::ByteBuffer> Encode(const Tensor& t, uint64_t chunk, bool is_dead = false,
                                     int64_t micros = 0) {
  TensorResponse in;
  in.tensor = t;
  in.is_dead = is_dead;
  in.send_start_micros = micros;
  std::vector<grpc::ByteBuffer> out(1);
  uint64_t content = 0;
  Status s = EncodeRecvTensorHeader(in, -1, &out[0], &content);
  EXPECT_TRUE(s.ok()) << s;
  for (uint64_t at = 0; at < content; at += chunk) {
    out.push_back(EncodeRecvTensorPiece(t, at, std::min(chunk, content - at)));
  }
  return out;
}

// Feeds `messages` to an assembler (each message re-cut into 5-byte slices when `chop`, as
// gRPC may deliver it); the first error, else Finish's status.
Status Assemble(const std::vector<grpc::ByteBuffer>& messages, TensorResponse* out,
                bool chop = false) {
  RecvTensorAssembler a(nullptr, kKey);
  for (const grpc::ByteBuffer& m : messages) {
    TX_RETURN_IF_ERROR(a.Add(chop ? Chop(Flatten(m), 5) : m));
  }
  return a.Finish(out);
}

void RoundTrip(const Tensor& t, uint64_t chunk, bool is_dead = false, int64_t micros = 0) {
  SCOPED_TRACE(absl::StrCat(DataTypeString(t.dtype()), " ", t.shape().DebugString(),
                            " chunk ", chunk));
  const std::vector<grpc::ByteBuffer> messages = Encode(t, chunk, is_dead, micros);
  const bool pieces = t.dtype() != DT_STRING && t.TotalBytes() > 0;
  const uint64_t expected_pieces = pieces ? (t.TotalBytes() + chunk - 1) / chunk : 0;
  EXPECT_EQ(messages.size(), 1 + expected_pieces);
  for (bool chop : {false, true}) {
    TensorResponse out;
    Status s = Assemble(messages, &out, chop);
    ASSERT_TRUE(s.ok()) << s;
    ExpectSameTensor(out.tensor, t);
    EXPECT_EQ(out.is_dead, is_dead);
    EXPECT_EQ(out.send_start_micros, micros);
  }
  // Protobuf reads the same messages; the pieces' data concatenated is the tensor's buffer.
  RecvTensorChunk header;
  ASSERT_TRUE(header.ParseFromString(Flatten(messages[0])));
  EXPECT_EQ(header.response().tensor().dtype(), t.dtype());
  EXPECT_EQ(header.content_bytes(), pieces ? static_cast<int64_t>(t.TotalBytes()) : 0);
  std::string content;
  for (size_t i = 1; i < messages.size(); ++i) {
    RecvTensorChunk piece;
    ASSERT_TRUE(piece.ParseFromString(Flatten(messages[i])));
    EXPECT_EQ(piece.offset(), static_cast<int64_t>(content.size()));
    EXPECT_FALSE(piece.has_response());
    content += piece.data();
  }
  if (pieces) {
    EXPECT_EQ(content, std::string(static_cast<const char*>(t.raw_data()), t.TotalBytes()));
  }
}

TEST(RecvTensorStreamTest, RoundTripsDtypesShapesAndOddSizes) {
  RoundTrip(Iota<float>(TensorShape({1001}), 0.5f), 4096, /*is_dead=*/false, 1234567);
  RoundTrip(Iota<float>(TensorShape({1024}), 0.5f), 4096);  // exactly one piece
  RoundTrip(Iota<float>(TensorShape({1025}), 0.5f), 4096);  // 4 bytes over: two pieces
  RoundTrip(Iota<double>(TensorShape({3, 7}), -2.0), 13);   // pieces cut elements in two
  RoundTrip(Iota<int64_t>(TensorShape({100}), int64_t{1} << 40), 1);
  RoundTrip(Iota<int32_t>(TensorShape({5, 9}), -7), 1 << 20);
  RoundTrip(Iota<uint8_t>(TensorShape({3, 1, 2}), 250), 4);
  RoundTrip(Iota<int8_t>(TensorShape({7}), -3), 2);
  RoundTrip(Tensor::Scalar<bool>(true), 4096, /*is_dead=*/true);
  RoundTrip(Tensor::Scalar<float>(3.25f), 4096);
  RoundTrip(Tensor(DT_FLOAT, TensorShape({0, 4})), 4096);  // no content: header only
  Tensor s(DT_STRING, TensorShape({3}));
  s.flat<std::string>()[0] = "";
  s.flat<std::string>()[1] = "abc";
  s.flat<std::string>()[2] = std::string(3000, '\0') + "tail";
  RoundTrip(s, 16);  // strings travel whole in the header
  RoundTrip(Tensor(DT_STRING, TensorShape({0})), 16);
}

TEST(RecvTensorStreamTest, PiecesReferenceTheTensorsBuffer) {
  Tensor t = Iota<float>(TensorShape({4096}), 1.0f);
  grpc::ByteBuffer piece = EncodeRecvTensorPiece(t, 8192, 4096);
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(piece.Dump(&slices).ok());
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(static_cast<const void*>(slices[1].begin()),
            static_cast<const char*>(t.raw_data()) + 8192);
  EXPECT_EQ(slices[1].size(), 4096u);
}

TEST(RecvTensorStreamTest, ReadsProtobufWrittenMessages) {
  // A plain protobuf peer: offset 0 is not written at all (proto3's default).
  const Tensor t = Iota<int32_t>(TensorShape({6}), 10);
  RecvTensorChunk header;
  header.mutable_response()->mutable_tensor()->set_dtype(DT_INT32);
  t.shape().AsProto(header.mutable_response()->mutable_tensor()->mutable_tensor_shape());
  header.set_content_bytes(24);
  RecvTensorChunk first, second;
  first.set_data(std::string(static_cast<const char*>(t.raw_data()), 16));
  second.set_offset(16);
  second.set_data(std::string(static_cast<const char*>(t.raw_data()) + 16, 8));
  std::vector<grpc::ByteBuffer> messages;
  for (const RecvTensorChunk* m : {&header, &first, &second}) {
    messages.push_back(Chop(m->SerializeAsString(), 64));
  }
  TensorResponse out;
  Status s = Assemble(messages, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectSameTensor(out.tensor, t);
}

// Expects DATA_LOSS whose message names the key and contains `what`.
void ExpectLost(const Status& s, const std::string& what) {
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find(kKey), std::string_view::npos) << s;
  EXPECT_NE(s.message().find(what), std::string_view::npos) << s;
}

TEST(RecvTensorStreamTest, BadStreamsAreDataLoss) {
  const Tensor t = Iota<float>(TensorShape({250}), 1.0f);  // 1000 bytes: pieces of 300, 300,
  const std::vector<grpc::ByteBuffer> good = Encode(t, 300);  // 300, 100
  ASSERT_EQ(good.size(), 5u);
  TensorResponse out;
  // A missing piece, a repeated one, pieces out of order.
  ExpectLost(Assemble({good[0], good[1], good[3], good[4]}, &out), "offset 600 where 300");
  ExpectLost(Assemble({good[0], good[1], good[1], good[2]}, &out), "offset 0 where 300");
  ExpectLost(Assemble({good[0], good[2], good[1]}, &out), "offset 300 where 0");
  // The stream ends early; or before its header; or holds only pieces.
  ExpectLost(Assemble({good[0], good[1], good[2]}, &out), "ended after 600 of 1000");
  ExpectLost(Assemble({}, &out), "ended before its header");
  ExpectLost(Assemble({good[1]}, &out), "not a header");
  // A piece too many, a piece running past the content, an empty piece, a second header.
  ExpectLost(Assemble({good[0], good[1], good[2], good[3], good[4], good[4]}, &out),
             "offset 900 where 1000");
  const Tensor big = Iota<float>(TensorShape({400}), 1.0f);
  ExpectLost(Assemble({good[0], good[1], good[2], good[3], good[4],
                       EncodeRecvTensorPiece(big, 1000, 4)},
                      &out),
             "a piece of 4 bytes at offset 1000 of 1000");
  ExpectLost(Assemble({good[0], good[1], good[2], good[3], EncodeRecvTensorPiece(big, 900, 200)},
                      &out),
             "a piece of 200 bytes at offset 900 of 1000");
  RecvTensorChunk empty_piece;
  empty_piece.set_offset(300);
  grpc::Slice empty_bytes(empty_piece.SerializeAsString());
  ExpectLost(Assemble({good[0], good[1], grpc::ByteBuffer(&empty_bytes, 1)}, &out),
             "a piece without data");
  ExpectLost(Assemble({good[0], good[0]}, &out), "a second header");
  // A piece truncated inside its data: the length says more than the message holds.
  std::string cut = Flatten(good[1]);
  cut.resize(cut.size() - 10);
  ExpectLost(Assemble({good[0], Chop(cut, 50)}, &out), "shorter than its length 300");
  // A piece whose data comes before its offset.
  RecvTensorChunk swapped;
  swapped.set_data("abcd");
  std::string bytes = swapped.SerializeAsString();
  bytes += std::string("\x18\x00", 2);  // offset = 0 after the data
  ExpectLost(Assemble({good[0], Chop(bytes, 3)}, &out), "offset after its data");
}

TEST(RecvTensorStreamTest, HeadersThatDoNotMatchTheirContentAreDataLoss) {
  auto header = [](DataType dtype, std::vector<int64_t> dims, int64_t content_bytes) {
    RecvTensorChunk h;
    h.mutable_response()->mutable_tensor()->set_dtype(dtype);
    for (int64_t d : dims) {
      h.mutable_response()->mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(d);
    }
    h.set_content_bytes(content_bytes);
    return Chop(h.SerializeAsString(), 1000);
  };
  TensorResponse out;
  ExpectLost(Assemble({header(DT_FLOAT, {10}, 44)}, &out), "content_bytes is 44, but a float");
  ExpectLost(Assemble({header(DT_FLOAT, {10}, -1)}, &out), "negative content_bytes");
  ExpectLost(Assemble({header(DT_STRING, {2}, 8)}, &out), "dtype string");
  ExpectLost(Assemble({header(static_cast<DataType>(77), {2}, 8)}, &out), "content_bytes 8");
  ExpectLost(Assemble({header(DT_FLOAT, {-3}, 12)}, &out), "bad shape");
  // Content both inline and announced.
  RecvTensorChunk both;
  Iota<float>(TensorShape({2}), 1.0f).AsProtoField(both.mutable_response()->mutable_tensor());
  both.set_content_bytes(8);
  grpc::Slice both_bytes(both.SerializeAsString());
  ExpectLost(Assemble({grpc::ByteBuffer(&both_bytes, 1)}, &out), "content as well as");
  // Not a RecvTensorChunk at all.
  ExpectLost(Assemble({Chop(std::string("\xff\xff\xff", 3), 2)}, &out), "not a RecvTensorChunk");
}

TEST(RecvTensorStreamTest, UninitializedTensorIsRefused) {
  TensorResponse in;
  grpc::ByteBuffer out;
  uint64_t content = 0;
  EXPECT_EQ(EncodeRecvTensorHeader(in, -1, &out, &content).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tensorflux
