// `tensorflux convert idx2tfrecord` and `tensorflux inspect FILE.tfrecord`, on hand-made IDX
// files: the records are read back with io::RecordReader and parsed as Examples.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_runner.h"
#include "tensorflux/example.pb.h"
#include "tensorflux/io/record_io.h"

namespace tensorflux {
namespace {

using cli_test::ExpectError;
using cli_test::RunCli;

std::string Scratch(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) /
          ("cli_records_" + std::to_string(getpid()) + "_" + name))
      .string();
}

std::string WriteIdx(const std::string& name, int code, std::vector<uint32_t> dims,
                     const std::string& payload) {
  std::string bytes = {0, 0, static_cast<char>(code), static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) bytes.push_back(static_cast<char>(d >> s));
  const std::string path = Scratch(name);
  std::ofstream(path, std::ios::binary) << bytes << payload;
  return path;
}

TEST(CliRecordsTest, ConvertThenInspect) {
  // Three 2x2 images (bytes 0..11) and labels 7, 0, 255.
  std::string pixels;
  for (int i = 0; i < 12; ++i) pixels.push_back(static_cast<char>(i));
  const std::string images = WriteIdx("img.idx", 0x08, {3, 2, 2}, pixels);
  const std::string labels = WriteIdx("lab.idx", 0x08, {3}, std::string("\x07\x00\xff", 3));
  const std::string out = Scratch("out.tfrecord");
  auto r = RunCli("convert idx2tfrecord " + images + " " + labels + " " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "wrote 3 Examples to " + out + "\n");

  auto reader = io::RecordReader::Open(out);
  ASSERT_TRUE(reader.ok());
  std::string rec;
  const int64_t want_labels[] = {7, 0, 255};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE((*reader)->ReadRecord(&rec).ok());
    Example ex;
    ASSERT_TRUE(ex.ParseFromString(rec));
    const auto& f = ex.features().feature();
    EXPECT_EQ(f.at("image").bytes_list().value(0), pixels.substr(4 * i, 4));
    EXPECT_EQ(f.at("label").int64_list().value(0), want_labels[i]);
  }
  EXPECT_EQ((*reader)->ReadRecord(&rec).code(), absl::StatusCode::kOutOfRange);

  r = RunCli("inspect " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "tfrecord: " + out + " (3 records)\nfirst Example features:\n"
                   "  image: bytes[1] <4 bytes>\n  label: int64[1] 7\n");
}

TEST(CliRecordsTest, Errors) {
  const std::string images = WriteIdx("img2.idx", 0x08, {2, 1}, "ab");
  const std::string labels = WriteIdx("lab2.idx", 0x08, {3}, "abc");
  ExpectError(RunCli("convert idx2tfrecord " + images + " " + labels + " " + Scratch("x.tfrecord")),
              "INVALID_ARGUMENT", "IMAGES has 2 items but LABELS has 3");
  const std::string floats = WriteIdx("f.idx", 0x0D, {2}, std::string(8, '\0'));
  ExpectError(RunCli("convert idx2tfrecord " + floats + " " + labels + " " + Scratch("y.tfrecord")),
              "INVALID_ARGUMENT", "expected uint8");
  ExpectError(RunCli("convert idx2png a b c"), "INVALID_ARGUMENT", "idx2tfrecord");
  const std::string cut = WriteIdx("cut.idx", 0x08, {2, 4}, "abcde");
  const std::string lab = WriteIdx("lab3.idx", 0x08, {2}, "ab");
  ExpectError(RunCli("convert idx2tfrecord " + cut + " " + lab + " " + Scratch("z.tfrecord")),
              "DATA_LOSS", "truncated IDX payload");
  // A TFRecord file whose second record is cut: inspect reports the DATA_LOSS.
  const std::string good = Scratch("good.tfrecord");
  {
    auto w = io::RecordWriter::Open(good);
    ASSERT_TRUE((*w)->WriteRecord("one").ok() && (*w)->WriteRecord("two").ok());
  }
  std::string bytes = cli_test::ReadAll(good);
  std::ofstream(Scratch("cut.tfrecord"), std::ios::binary) << bytes.substr(0, 19 + 13);
  ExpectError(RunCli("inspect " + Scratch("cut.tfrecord")), "DATA_LOSS", "truncated record at 19 in file");
}

}  // namespace
}  // namespace tensorflux
