// IdxReader on hand-made files (every header error, truncation, big-endian elements, gzip) and on
// the real Fashion-MNIST files.
#include "tensorflux/io/idx_reader.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "io_test_util.h"

namespace tensorflux {
namespace io {
namespace {

using testutil::Gzip;
using testutil::WriteFile;

std::string Header(int code, std::initializer_list<uint32_t> dims) {
  std::string h = {0, 0, static_cast<char>(code), static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) h.push_back(static_cast<char>(d >> s));
  return h;
}

TEST(IdxReaderTest, Uint8ItemsPlainAndGzip) {
  // 3 items of [2, 2]: item i holds 4i .. 4i+3.
  std::string bytes = Header(0x08, {3, 2, 2});
  for (int i = 0; i < 12; ++i) bytes.push_back(static_cast<char>(i));
  for (const std::string& file : {WriteFile("u8.idx", bytes), WriteFile("u8.idx.gz", Gzip(bytes))}) {
    auto r = IdxReader::Open(file);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ((*r)->dtype(), DT_UINT8);
    EXPECT_EQ((*r)->num_items(), 3);
    EXPECT_EQ((*r)->item_shape(), TensorShape({2, 2}));
    Tensor item;
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE((*r)->ReadItem(&item).ok());
      ASSERT_EQ(item.shape(), TensorShape({2, 2}));
      for (int j = 0; j < 4; ++j) EXPECT_EQ(item.flat<uint8_t>()[j], 4 * i + j);
    }
    EXPECT_EQ((*r)->ReadItem(&item).code(), absl::StatusCode::kOutOfRange);
  }
}

TEST(IdxReaderTest, BigEndianInt32AndFloat) {
  // int32 [2]: -2 and 0x01020304, then float32 [1] = 1.5 (0x3FC00000), big-endian on disk.
  std::string i32 = Header(0x0C, {2}) + std::string("\xff\xff\xff\xfe\x01\x02\x03\x04", 8);
  auto r = IdxReader::Open(WriteFile("i32.idx", i32));
  ASSERT_TRUE(r.ok()) << r.status();
  Tensor all;
  ASSERT_TRUE((*r)->ReadAll(&all).ok());
  ASSERT_EQ(all.shape(), TensorShape({2}));
  EXPECT_EQ(all.flat<int32_t>()[0], -2);
  EXPECT_EQ(all.flat<int32_t>()[1], 0x01020304);
  auto f = IdxReader::Open(WriteFile("f32.idx", Header(0x0D, {1}) + std::string("\x3f\xc0\x00\x00", 4)));
  ASSERT_TRUE(f.ok());
  Tensor x;
  ASSERT_TRUE((*f)->ReadItem(&x).ok());
  EXPECT_EQ(x.dims(), 0);  // an idx1 item is a scalar
  EXPECT_EQ(x.scalar<float>(), 1.5f);
}

void ExpectOpenError(const std::string& name, const std::string& bytes, absl::StatusCode code,
                     const std::string& offset_text) {
  const std::string path = WriteFile(name, bytes);
  auto r = IdxReader::Open(path);
  ASSERT_FALSE(r.ok()) << name;
  EXPECT_EQ(r.status().code(), code) << r.status();
  EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find(offset_text), std::string::npos) << r.status();
}

TEST(IdxReaderTest, HeaderErrorsNameFileAndOffset) {
  ExpectOpenError("magic.idx", std::string("\x01\x00\x08\x01\x00\x00\x00\x01\x05", 9),
                  absl::StatusCode::kInvalidArgument, "at offset 0");
  ExpectOpenError("dtype.idx", Header(0x0A, {1}) + "x", absl::StatusCode::kInvalidArgument,
                  "at offset 2");
  ExpectOpenError("ndims.idx", Header(0x08, {}), absl::StatusCode::kInvalidArgument,
                  "at offset 3");
  ExpectOpenError("short_magic.idx", std::string("\x00\x00", 2), absl::StatusCode::kDataLoss,
                  "at offset 2");
  // Second dimension cut after 2 of its 4 bytes.
  ExpectOpenError("short_dims.idx", Header(0x08, {5, 7}).substr(0, 10),
                  absl::StatusCode::kDataLoss, "at offset 8");
  ExpectOpenError("huge_dim.idx", Header(0x08, {0xFFFFFFFFu}), absl::StatusCode::kInvalidArgument,
                  "at offset 4");
  ExpectOpenError("missing.idx", "", absl::StatusCode::kDataLoss, "at offset 0");
}

TEST(IdxReaderTest, TruncatedPayloadIsDataLossNamingTheItem) {
  // Header says 3 items of 4 bytes, the file holds 9 bytes: item 2 is cut after 1 byte.
  std::string bytes = Header(0x08, {3, 4}) + std::string(9, '\x07');
  for (const std::string& file :
       {WriteFile("trunc.idx", bytes), WriteFile("trunc.idx.gz", Gzip(bytes))}) {
    auto r = IdxReader::Open(file);
    ASSERT_TRUE(r.ok());
    Tensor item;
    ASSERT_TRUE((*r)->ReadItem(&item).ok());
    ASSERT_TRUE((*r)->ReadItem(&item).ok());
    Status s = (*r)->ReadItem(&item);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
    EXPECT_NE(s.message().find("item 2 of 3"), std::string::npos) << s;
    EXPECT_NE(s.message().find("at offset 21"), std::string::npos) << s;  // 12 header + 9
  }
}

TEST(IdxReaderTest, CutGzipStreamIsDataLoss) {
  std::string bytes = Header(0x08, {1000}) + std::string(1000, '\x03');
  std::string gz = Gzip(bytes);
  auto r = IdxReader::Open(WriteFile("cut.idx.gz", gz.substr(0, gz.size() / 2)));
  Status s = r.ok() ? [&] { Tensor t; return (*r)->ReadAll(&t); }() : r.status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
}

// The real Fashion-MNIST training files. Expected values from an independent reading with
// Python's gzip + numpy.frombuffer(offset=16 / 8): label[0..4] = 9 0 0 3 0, image 0 sums to
// 76247 and its row 10 is listed below, image 59999 sums to 16684, label[59999] = 5.
TEST(IdxReaderTest, FashionMnist) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  if (!std::filesystem::exists(dir + "train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "no Fashion-MNIST files in " << dir;
  auto images = IdxReader::Open(dir + "train-images-idx3-ubyte.gz");
  auto labels = IdxReader::Open(dir + "train-labels-idx1-ubyte.gz");
  ASSERT_TRUE(images.ok() && labels.ok());
  EXPECT_EQ((*images)->dims(), (std::vector<int64_t>{60000, 28, 28}));
  EXPECT_EQ((*labels)->dims(), (std::vector<int64_t>{60000}));
  Tensor img, label;
  ASSERT_TRUE((*images)->ReadItem(&img).ok());
  int64_t sum = 0;
  for (uint8_t v : img.flat<uint8_t>()) sum += v;
  EXPECT_EQ(sum, 76247);
  const std::vector<int> row10 = {0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
                                  0,   0,   0,   193, 228, 218, 213, 198, 180, 212,
                                  210, 211, 213, 223, 220, 243, 202, 0};
  for (int c = 0; c < 28; ++c) EXPECT_EQ(img.flat<uint8_t>()[10 * 28 + c], row10[c]) << c;
  const std::vector<int> first = {9, 0, 0, 3, 0};
  for (int v : first) {
    ASSERT_TRUE((*labels)->ReadItem(&label).ok());
    EXPECT_EQ(label.scalar<uint8_t>(), v);
  }
  Tensor rest;
  ASSERT_TRUE((*images)->ReadAll(&rest).ok());
  ASSERT_EQ(rest.shape(), TensorShape({59999, 28, 28}));
  sum = 0;
  for (int64_t i = 59998 * 784; i < 59999 * 784; ++i) sum += rest.flat<uint8_t>()[i];
  EXPECT_EQ(sum, 16684);
  Tensor rest_labels;
  ASSERT_TRUE((*labels)->ReadAll(&rest_labels).ok());
  EXPECT_EQ(rest_labels.flat<uint8_t>()[59994], 5);
}

}  // namespace
}  // namespace io
}  // namespace tensorflux
