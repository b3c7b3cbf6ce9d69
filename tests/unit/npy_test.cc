// .npy reading (files written by NumPy) and writing (round trip), and malformed input.
#include "tensorflux/core/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace tensorflux {
namespace {

std::string Fixture(const std::string& name) {
  return std::string(TX_TEST_DATA_DIR) + "/npy/" + name;
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

TEST(NpyTest, ReadsFloat32WrittenByNumpy) {
  auto t = ReadNpyFile(Fixture("f32_2x3.npy"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DT_FLOAT);
  EXPECT_EQ(t->shape(), TensorShape({2, 3}));
  EXPECT_EQ(Values<float>(*t), (std::vector<float>{1.5f, -2.f, 3.f, 4.f, 5.25f, 1e-3f}));
}

TEST(NpyTest, ReadsInt64Bool8BitAndEmpty) {
  auto i64 = ReadNpyFile(Fixture("i64_vec.npy"));
  ASSERT_TRUE(i64.ok()) << i64.status();
  EXPECT_EQ(i64->dtype(), DT_INT64);
  EXPECT_EQ(Values<int64_t>(*i64),
            (std::vector<int64_t>{1, -2, int64_t{1} << 40, -(int64_t{1} << 62)}));

  auto b = ReadNpyFile(Fixture("bool_2x2.npy"));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->dtype(), DT_BOOL);
  EXPECT_EQ(Values<bool>(*b), (std::vector<bool>{true, false, false, true}));

  auto u8 = ReadNpyFile(Fixture("u8_scalar.npy"));
  ASSERT_TRUE(u8.ok()) << u8.status();
  EXPECT_EQ(u8->dtype(), DT_UINT8);
  EXPECT_EQ(u8->dims(), 0);
  EXPECT_EQ(u8->scalar<uint8_t>(), 200);

  auto e = ReadNpyFile(Fixture("f8_empty.npy"));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->dtype(), DT_DOUBLE);
  EXPECT_EQ(e->shape(), TensorShape({2, 0}));
}

TEST(NpyTest, ReadsHalfAndVersions2And3) {
  auto h = ReadNpyFile(Fixture("f16_3.npy"));
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->dtype(), DT_HALF);
  EXPECT_EQ(static_cast<float>(h->data<Half>()[0]), 0.5f);
  EXPECT_EQ(static_cast<float>(h->data<Half>()[1]), -1.f);
  EXPECT_EQ(static_cast<float>(h->data<Half>()[2]), 65504.f);

  auto v2 = ReadNpyFile(Fixture("i16_v2.npy"));
  ASSERT_TRUE(v2.ok()) << v2.status();
  EXPECT_EQ(v2->dtype(), DT_INT16);
  EXPECT_EQ(Values<int16_t>(*v2), (std::vector<int16_t>{1, -1, 300, -300}));

  auto v3 = ReadNpyFile(Fixture("u16_v3.npy"));
  ASSERT_TRUE(v3.ok()) << v3.status();
  EXPECT_EQ(v3->dtype(), DT_UINT16);
  EXPECT_EQ(Values<uint16_t>(*v3), (std::vector<uint16_t>{1, 65535}));
}

TEST(NpyTest, RejectsFortranOrderBigEndianAndStructured) {
  auto f = ReadNpyFile(Fixture("i32_fortran.npy"));
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(f.status().message().find("Fortran"), std::string::npos) << f.status();

  auto be = ReadNpyFile(Fixture("f4_bigendian.npy"));
  EXPECT_EQ(be.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(be.status().message().find("big-endian"), std::string::npos) << be.status();

  auto s = ReadNpyFile(Fixture("structured.npy"));
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("structured"), std::string::npos) << s.status();
}

TEST(NpyTest, MissingFileIsNotFound) {
  auto t = ReadNpyFile(Fixture("no_such_file.npy"));
  EXPECT_EQ(t.status().code(), absl::StatusCode::kNotFound);
}

TEST(NpyTest, RoundTripsEveryNpyDtype) {
  auto check = [](auto tag, DataType dt) {
    using T = typename decltype(tag)::type;
    Tensor t(dt, TensorShape({2, 3}));
    for (int i = 0; i < 6; ++i) t.data<T>()[i] = static_cast<T>(i % 2 == 0 ? i : 1);
    auto bytes = EncodeNpy(t);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    // Data starts on a 64-byte boundary.
    EXPECT_EQ((bytes->size() - t.TotalBytes()) % 64, 0u);
    auto back = ParseNpy(*bytes);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->dtype(), dt);
    EXPECT_EQ(back->shape(), t.shape());
    EXPECT_EQ(0, std::memcmp(back->raw_data(), t.raw_data(), t.TotalBytes())) << DataTypeString(dt);
  };
  check(TypeTag<float>{}, DT_FLOAT);
  check(TypeTag<double>{}, DT_DOUBLE);
  check(TypeTag<int8_t>{}, DT_INT8);
  check(TypeTag<int16_t>{}, DT_INT16);
  check(TypeTag<int32_t>{}, DT_INT32);
  check(TypeTag<int64_t>{}, DT_INT64);
  check(TypeTag<uint8_t>{}, DT_UINT8);
  check(TypeTag<uint16_t>{}, DT_UINT16);
  check(TypeTag<uint32_t>{}, DT_UINT32);
  check(TypeTag<uint64_t>{}, DT_UINT64);
  check(TypeTag<bool>{}, DT_BOOL);
}

TEST(NpyTest, EncodesTheHeaderNumpyExpects) {
  Tensor t(DT_FLOAT, TensorShape({3}));
  auto bytes = EncodeNpy(t);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_NE(bytes->find("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"),
            std::string::npos);
  Tensor s = Tensor::Scalar<int64_t>(7);
  auto sb = EncodeNpy(s);
  ASSERT_TRUE(sb.ok());
  EXPECT_NE(sb->find("'shape': ()"), std::string::npos);
  auto back = ParseNpy(*sb);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->scalar<int64_t>(), 7);
}

TEST(NpyTest, WritesFilesAndRejectsUnencodableDtypes) {
  std::string path = ::testing::TempDir() + "/npy_test_roundtrip_" + std::to_string(getpid()) + ".npy";
  Tensor t(DT_INT32, TensorShape({2, 2}));
  for (int i = 0; i < 4; ++i) t.data<int32_t>()[i] = i * 10;
  ASSERT_TRUE(WriteNpyFile(path, t).ok());
  auto back = ReadNpyFile(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(Values<int32_t>(*back), (std::vector<int32_t>{0, 10, 20, 30}));
  std::remove(path.c_str());

  Tensor bf(DT_BFLOAT16, TensorShape({1}));
  EXPECT_EQ(EncodeNpy(bf).status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(WriteNpyFile("/nonexistent-dir/x.npy", t).code(), absl::StatusCode::kNotFound);
}

// A v1.0 file with `dict` as its header and `data` as its payload.
std::string MakeNpy(const std::string& dict, const std::string& data, int major = 1) {
  std::string h = dict + "\n";
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  out.push_back(static_cast<char>(h.size() & 0xff));
  out.push_back(static_cast<char>(h.size() >> 8));
  return out + h + data;
}

TEST(NpyTest, MalformedHeadersAreInvalidArgument) {
  const std::string four(4, '\0');
  struct Case {
    std::string bytes;
    std::string expect;  // substring of the message
  };
  std::vector<Case> cases = {
      {"", "magic"},
      {"NUMPY\x01\x00", "magic"},
      {std::string("\x93NUMPY\x04\x00", 8), "version"},
      {std::string("\x93NUMPY\x01\x00\xff\x7f{}", 12), "exceeds"},
      {std::string("\x93NUMPY\x01", 7), "magic"},
      {MakeNpy("{'descr': '<f4', 'fortran_order': False}", four), "'shape'"},
      {MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", four), "header"},
      {MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", four), "expected"},
      {MakeNpy("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", four), "header"},
      {MakeNpy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}", four), "not supported"},
      {MakeNpy("{'descr': '<O', 'fortran_order': False, 'shape': (1,)}", four), "not supported"},
      {MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", four), "integer"},
      {MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", four), "needs 8"},
      {MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", four + "x"), "needs 4"},
      {MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}", four),
       "dims"},
      {MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': "
               "(4294967296,4294967296,4294967296)}",
               four),
       "shape"},
      {MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", four),
       "overflow"},
      {MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} trailing", four),
       "unexpected"},
      {MakeNpy("{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}", four), "expected"},
  };
  for (const Case& c : cases) {
    auto t = ParseNpy(c.bytes);
    ASSERT_FALSE(t.ok()) << "accepted: " << c.bytes;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << t.status();
    EXPECT_NE(t.status().message().find(c.expect), std::string::npos)
        << "message '" << t.status().message() << "' lacks '" << c.expect << "'";
  }
}

TEST(NpyTest, BoolBytesAreNormalized) {
  auto t = ParseNpy(MakeNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (2,)}",
                            std::string("\x00\x05", 2)));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(Values<bool>(*t), (std::vector<bool>{false, true}));
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(t->raw_data())[1], 1);
}

}  // namespace
}  // namespace tensorflux
