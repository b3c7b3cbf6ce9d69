// Safetensors writer and reader: layout bytes, round trips of every dtype, atomic replacement,
// and hand-made or damaged files, each DATA_LOSS naming the problem (never a crash).
#include "tensorflux/train/safetensors.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "../kernels/kernel_test_util.h"
#include "checkpoint_test_util.h"
#include "tensorflux/train/file_io.h"

namespace tensorflux {
namespace {

namespace fs = std::filesystem;
using test::ReadFile;
using test::WriteFile;

class SafetensorsTest : public test::CheckpointDirTest {
 protected:
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
};

// A file from a raw header text and data size (zeros).
std::string MakeFile(const std::string& header, size_t data_bytes) {
  uint64_t n = header.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out + header + std::string(data_bytes, '\0');
}

TEST_F(SafetensorsTest, LayoutIsTheStandardOne) {
  const std::string path = Path("a.safetensors");
  ASSERT_TRUE(WriteSafetensors(path,
                               {{"w", test::AsTensor<float>({1.5f, -2.f}, {2})},
                                {"b", test::AsTensor<int64_t>({7}, {1, 1})}},
                               {{"format", "tx"}})
                  .ok());
  const std::string bytes = ReadFile(path);
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  ASSERT_LE(8 + n, bytes.size());
  EXPECT_EQ(n % 8, 0u);  // padded so the data is 8-byte aligned
  const std::string header = bytes.substr(8, n);
  // Names sorted, b's 8 bytes first, then w's 8.
  EXPECT_EQ(header.substr(0, header.find_last_not_of(' ') + 1),
            R"({"__metadata__":{"format":"tx"},"b":{"data_offsets":[0,8],"dtype":"I64","shape":[1,1]},)"
            R"("w":{"data_offsets":[8,16],"dtype":"F32","shape":[2]}})");
  const std::string data = bytes.substr(8 + n);
  ASSERT_EQ(data.size(), 16u);
  int64_t b;
  float w[2];
  std::memcpy(&b, data.data(), 8);
  std::memcpy(w, data.data() + 8, 8);
  EXPECT_EQ(b, 7);
  EXPECT_EQ(w[0], 1.5f);
  EXPECT_EQ(w[1], -2.f);
}

TEST_F(SafetensorsTest, RoundTripsEveryDtype) {
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT8, DT_INT16, DT_INT32,
                      DT_INT64, DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64, DT_BOOL}) {
    tensors.emplace_back("t_" + DataTypeString(dt),
                         test::FromDoubles(dt, TensorShape({2, 2}), {0, 1, 1, 5}));
  }
  tensors.emplace_back("empty", Tensor(DT_FLOAT, TensorShape({3, 0})));
  tensors.emplace_back("scalar", Tensor::Scalar<double>(0.1));
  const std::string path = Path("all.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, tensors).ok());
  auto r = SafetensorsReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->entries().size(), tensors.size());
  EXPECT_TRUE((*r)->metadata().empty());
  for (const auto& [name, t] : tensors) {
    auto got = (*r)->Read(name);
    ASSERT_TRUE(got.ok()) << name << ": " << got.status();
    EXPECT_EQ(got->dtype(), t.dtype()) << name;
    EXPECT_EQ(got->shape(), t.shape()) << name;
    EXPECT_EQ(test::ToDoubles(*got), test::ToDoubles(t)) << name;
  }
  EXPECT_EQ((*r)->Read("nope").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(SafetensorsReader::Open(Path("missing")).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(SafetensorsTest, OpeningADirectoryIsAFailedPreconditionNamingIt) {
  fs::create_directory(dir_ / "adir");
  const Status s = SafetensorsReader::Open(Path("adir")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find(Path("adir")), std::string::npos) << s;
  EXPECT_EQ(IoError(EISDIR, "cannot read", "x").code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(SafetensorsTest, WriterErrorsLeaveNoFile) {
  const Tensor t = Tensor::Scalar<float>(1);
  EXPECT_EQ(WriteSafetensors(Path("x"), {{"a", t}, {"a", t}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WriteSafetensors(Path("x"), {{"__metadata__", t}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WriteSafetensors(Path("x"), {{"", t}}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WriteSafetensors(Path("x"), {{"bad\xff", t}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WriteSafetensors(Path("x"), {{"a", t}}, {{"k", "\xc3"}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WriteSafetensors(Path("x"), {{"s", Tensor::Scalar<std::string>("a")}}).code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(WriteSafetensors(Path("no/such/dir/x"), {{"a", t}}).code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(SafetensorsTest, ReplacementIsAtomic) {
  const std::string path = Path("c.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, {{"v", Tensor::Scalar<float>(1)}}).ok());
  {
    // A writer that dies before its rename (here: abandoned after writing and syncing a part).
    AtomicFile f(path);
    ASSERT_TRUE(f.Open().ok());
    ASSERT_TRUE(f.Append("\x10\0\0\0\0\0\0\0{\"v\":").ok());
    ASSERT_TRUE(f.Sync().ok());
    EXPECT_TRUE(fs::exists(f.temp_path()));
    EXPECT_EQ(f.temp_path().find(dir_.string()), 0u);  // same directory as the destination
  }
  auto r = SafetensorsReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->Read("v")->scalar<float>(), 1.f);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
  ASSERT_TRUE(WriteSafetensors(path, {{"v", Tensor::Scalar<float>(2)}}).ok());
  EXPECT_EQ((*SafetensorsReader::Open(path))->Read("v")->scalar<float>(), 2.f);
}

TEST_F(SafetensorsTest, BadHeadersAreDataLoss) {
  const std::string ok = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  struct Case {
    const char* what;
    std::string file;
  };
  const std::vector<Case> cases = {
      {"shorter than 8 bytes", std::string(5, '\0')},
      {"header past the end", MakeFile(ok, 8).substr(0, 20)},
      {"huge header length", std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) + ok},
      {"not JSON", MakeFile("{\"a\":", 0)},
      {"not an object", MakeFile("[1,2]", 0)},
      {"does not start with {", MakeFile(" {}", 0)},
      {"duplicate name",
       MakeFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8)},
      {"size != dtype x shape", MakeFile(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8)},
      {"overlap",
       MakeFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12)},
      {"gap",
       MakeFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})", 12)},
      {"trailing bytes", MakeFile(ok, 12)},
      {"truncated data", MakeFile(ok, 4)},
      {"unknown dtype", MakeFile(R"({"a":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})", 8)},
      {"negative dim", MakeFile(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8)},
      {"fractional offset", MakeFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8.0]}})", 8)},
      {"end before begin", MakeFile(R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[4,0]}})", 4)},
      {"offsets beyond int64",
       MakeFile(R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[18446744073709551615,18446744073709551615]}})", 0)},
      {"overflowing shape",
       MakeFile(R"({"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", 8)},
      {"missing field", MakeFile(R"({"a":{"dtype":"F32","shape":[2]}})", 8)},
      {"unknown field", MakeFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})", 8)},
      {"metadata value not a string", MakeFile(R"({"__metadata__":{"k":1}})", 0)},
      {"tensor info not an object", MakeFile(R"({"a":[1]})", 0)},
      {"name not UTF-8", MakeFile("{\"a\xff\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1)},
      {"rank 9", MakeFile(R"({"a":{"dtype":"U8","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,1]}})", 1)},
  };
  for (const Case& c : cases) {
    WriteFile(Path("bad"), c.file);
    auto r = SafetensorsReader::Open(Path("bad"));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << c.what << ": " << r.status();
  }
  // The message names the tensor when there is one.
  WriteFile(Path("bad"), MakeFile(R"({"weights":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8));
  auto r = SafetensorsReader::Open(Path("bad"));
  EXPECT_NE(r.status().message().find("'weights'"), std::string::npos) << r.status();
  // So does a truncated file.
  WriteFile(Path("bad"), MakeFile(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                                  R"("w":{"dtype":"F32","shape":[2],"data_offsets":[2,10]}})", 6));
  r = SafetensorsReader::Open(Path("bad"));
  EXPECT_NE(r.status().message().find("'w'"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("truncated"), std::string::npos) << r.status();
  // A bool byte that is neither 0 nor 1.
  std::string file = MakeFile(R"({"f":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})", 2);
  file.back() = 3;
  WriteFile(Path("bad"), file);
  auto rb = SafetensorsReader::Open(Path("bad"));
  ASSERT_TRUE(rb.ok()) << rb.status();
  EXPECT_EQ((*rb)->Read("f").status().code(), absl::StatusCode::kDataLoss);
  // Valid edge cases: an empty file's header "{}" and spaces after the JSON.
  WriteFile(Path("good"), MakeFile("{}      ", 0));
  EXPECT_TRUE(SafetensorsReader::Open(Path("good")).ok());
}

TEST_F(SafetensorsTest, EveryTruncationAndByteFlipIsHandled) {
  const std::string path = Path("d.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, {{"a", test::AsTensor<float>({1, 2}, {2})},
                                      {"flag", Tensor::Scalar<bool>(true)}},
                               {{"step", "3"}})
                  .ok());
  const std::string good = ReadFile(path);
  for (size_t n = 0; n < good.size(); ++n) {
    WriteFile(path, good.substr(0, n));
    EXPECT_EQ(SafetensorsReader::Open(path).status().code(), absl::StatusCode::kDataLoss) << n;
  }
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x04;
    WriteFile(path, bad);
    auto r = SafetensorsReader::Open(path);
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << i << ": " << r.status();
      continue;
    }
    // A flip inside a name, the metadata or the float data still parses; reads must not crash.
    for (const auto& e : (*r)->entries()) {
      auto t = (*r)->Read(e.name);
      EXPECT_TRUE(t.ok() || absl::IsDataLoss(t.status())) << i << ": " << t.status();
    }
  }
}

}  // namespace
}  // namespace tensorflux
