// TFRecord writer and reader: framing bytes against a hand computation, round trips (plain and
// gzip), and every corruption (truncation in header / data / footer, bad length CRC, bad data CRC)
// with and without skip-and-count. Also InputStream::ReadLine (text lines).
#include "tensorflux/io/record_io.h"

#include <gtest/gtest.h>

#include "io_test_util.h"
#include "tensorflux/core/crc32c.h"

namespace tensorflux {
namespace io {
namespace {

using testutil::Gzip;
using testutil::ReadFile;
using testutil::ScratchPath;
using testutil::WriteFile;

std::string WriteRecords(const std::string& name, const std::vector<std::string>& records) {
  const std::string path = ScratchPath(name);
  auto w = RecordWriter::Open(path);
  EXPECT_TRUE(w.ok()) << w.status();
  for (const std::string& r : records) EXPECT_TRUE((*w)->WriteRecord(r).ok());
  EXPECT_TRUE((*w)->Close().ok());
  return path;
}

std::vector<std::string> ReadAll(const std::string& path, Status* end, bool skip = false,
                                 int64_t* corrupt = nullptr) {
  RecordReader::Options opt;
  opt.skip_corrupt = skip;
  auto r = RecordReader::Open(path, opt);
  EXPECT_TRUE(r.ok()) << r.status();
  std::vector<std::string> out;
  std::string rec;
  while ((*end = (*r)->ReadRecord(&rec)).ok()) out.push_back(rec);
  if (corrupt) *corrupt = (*r)->corrupt_records();
  return out;
}

TEST(RecordIoTest, FramingBytes) {
  // Record "abc": length 3 as uint64 LE, masked CRC-32C of those 8 bytes, data, masked CRC of
  // the data. Expected CRCs computed here from crc32c::Value (checked against the standard
  // vectors in crc32c_test) and the mask formula written out: rotr 15, + 0xA282EAD8.
  const std::string file = ReadFile(WriteRecords("abc.tfrecord", {"abc"}));
  ASSERT_EQ(file.size(), 8u + 4 + 3 + 4);
  EXPECT_EQ(file.substr(0, 8), std::string("\x03\0\0\0\0\0\0\0", 8));
  auto masked = [](uint32_t c) { return ((c >> 15) | (c << 17)) + 0xA282EAD8u; };
  auto le32 = [&](size_t at) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<unsigned char>(file[at + i])} << (8 * i);
    return v;
  };
  EXPECT_EQ(le32(8), masked(crc32c::Value(file.data(), 8)));
  EXPECT_EQ(file.substr(12, 3), "abc");
  EXPECT_EQ(le32(15), masked(crc32c::Value("abc", 3)));
}

TEST(RecordIoTest, RoundTripPlainAndGzip) {
  const std::vector<std::string> records = {"first", "", std::string(300000, 'x'),
                                            std::string("\0\1\2", 3)};
  const std::string path = WriteRecords("rt.tfrecord", records);
  Status end;
  EXPECT_EQ(ReadAll(path, &end), records);
  EXPECT_EQ(end.code(), absl::StatusCode::kOutOfRange) << end;
  const std::string gz = WriteFile("rt.tfrecord.gz", Gzip(ReadFile(path)));
  EXPECT_EQ(ReadAll(gz, &end), records);
  EXPECT_EQ(end.code(), absl::StatusCode::kOutOfRange) << end;
}

struct Corruption {
  const char* name;
  size_t cut_or_flip;  // byte index into the second record's bytes (which start at 19)
  bool truncate;       // cut the file there; else flip that byte
  const char* why;
  bool resync;  // skip_corrupt continues with the third record
  const char* where;  // TF's wording and offset: the record's start, or its data's for a CRC
};

TEST(RecordIoTest, CorruptionsAreDataLossNamingFileAndOffset) {
  // Three records "one" "two" "six": each 19 bytes, so the second starts at offset 19.
  const std::string good = ReadFile(WriteRecords("good.tfrecord", {"one", "two", "six"}));
  const Corruption cases[] = {
      {"cut_header", 5, true, "12-byte header", false, "truncated record at 19 in file '"},
      {"cut_data", 13, true, "the data needs 3", false, "truncated record at 19 in file '"},
      {"cut_footer", 17, true, "the data CRC", false, "truncated record at 19 in file '"},
      {"bad_length_crc", 9, false, "length CRC mismatch", false,
       "corrupted record at 19 in file '"},
      {"bad_length", 0, false, "length CRC mismatch", false, "corrupted record at 19 in file '"},
      {"bad_data", 13, false, "data CRC mismatch", true, "corrupted record at 31 in file '"},
      {"bad_data_crc", 16, false, "data CRC mismatch", true, "corrupted record at 31 in file '"},
  };
  for (const Corruption& c : cases) {
    std::string bytes = good;
    if (c.truncate) bytes.resize(19 + c.cut_or_flip);
    else bytes[19 + c.cut_or_flip] ^= 0x20;
    const std::string path = WriteFile(std::string(c.name) + ".tfrecord", bytes);
    Status end;
    std::vector<std::string> got = ReadAll(path, &end);
    EXPECT_EQ(got, std::vector<std::string>{"one"}) << c.name;
    EXPECT_EQ(end.code(), absl::StatusCode::kDataLoss) << c.name << ": " << end;
    EXPECT_NE(end.message().find(path), std::string::npos) << end;
    EXPECT_NE(end.message().find(std::string(c.where) + path + "'"), std::string::npos) << end;
    EXPECT_NE(end.message().find(c.why), std::string::npos) << c.name << ": " << end;

    // The error is sticky: every later read repeats it (never a quiet OUT_OF_RANGE).
    {
      auto r = RecordReader::Open(path);
      ASSERT_TRUE(r.ok());
      std::string rec;
      ASSERT_TRUE((*r)->ReadRecord(&rec).ok());
      for (int i = 0; i < 3; ++i) {
        Status again = (*r)->ReadRecord(&rec);
        EXPECT_EQ(again.code(), absl::StatusCode::kDataLoss) << c.name << " read " << i;
        EXPECT_EQ(again.message(), end.message()) << c.name << " read " << i;
      }
    }

    int64_t corrupt = -1;
    got = ReadAll(path, &end, /*skip=*/true, &corrupt);
    EXPECT_EQ(end.code(), absl::StatusCode::kOutOfRange) << c.name << ": " << end;
    EXPECT_EQ(corrupt, 1) << c.name;
    EXPECT_EQ(got, c.resync ? (std::vector<std::string>{"one", "six"})
                            : (std::vector<std::string>{"one"}))
        << c.name;
  }
}

TEST(RecordIoTest, OversizedLengthIsRejected) {
  const std::string path = WriteFile("huge.tfrecord", EncodeRecordHeader(uint64_t{1} << 40));
  auto r = RecordReader::Open(path);
  std::string rec;
  Status s = (*r)->ReadRecord(&rec);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("over the limit"), std::string::npos) << s;
}

TEST(RecordIoTest, MissingFileIsNotFound) {
  auto r = RecordReader::Open(ScratchPath("does_not_exist.tfrecord"));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  auto w = RecordWriter::Open(ScratchPath("no_such_dir/x.tfrecord"));
  EXPECT_FALSE(w.ok());
}

TEST(TextLinesTest, LinesWithoutTerminators) {
  // "\r\n" and "\n" endings, an empty line, a last line with no newline; a line longer than the
  // stream buffer.
  const std::string longline(InputStream::kBufferBytes + 17, 'q');
  const std::string text = "a,b\r\n\nthird\n" + longline + "\nlast";
  for (const std::string& path : {WriteFile("lines.txt", text),
                                  WriteFile("lines.txt.gz", Gzip(text))}) {
    auto in = InputStream::Open(path);
    ASSERT_TRUE(in.ok());
    std::vector<std::string> lines;
    std::string line;
    Status s;
    while ((s = (*in)->ReadLine(&line)).ok()) lines.push_back(line);
    EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
    EXPECT_EQ(lines, (std::vector<std::string>{"a,b", "", "third", longline, "last"}));
  }
  auto empty = InputStream::Open(WriteFile("empty.txt", ""));
  std::string line;
  EXPECT_EQ((*empty)->ReadLine(&line).code(), absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace io
}  // namespace tensorflux
