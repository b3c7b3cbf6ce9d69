// InputStream's gzip path (ISA-L's isal_inflate) against zlib-compressed data: every compression
// level, reads of every size (buffered, and direct into the destination), concatenated members,
// trailing bytes, and truncated or corrupt streams (DATA_LOSS naming the file). Also the plain
// file's direct reads (readv with look-ahead) mixed with buffered ones.
#include "tensorflux/io/input_stream.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "io_test_util.h"

namespace tensorflux {
namespace io {
namespace {

using testutil::Gzip;
using testutil::WriteFile;

// Compressible but not trivial bytes: runs of words from a small alphabet and random bytes.
std::string TestBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s;
  s.reserve(n);
  while (s.size() < n) {
    if (rng() % 4 == 0) {
      s.push_back(static_cast<char>(rng()));
    } else {
      static const char* kWords[] = {"tensor ", "flux ", "graph ", "0123456789", "\n"};
      s += kWords[rng() % 5];
    }
  }
  s.resize(n);
  return s;
}

// The whole stream, read in pieces of `chunk` bytes (the last may be short).
Status ReadInChunks(const std::string& path, size_t chunk, std::string* out) {
  TX_ASSIGN_OR_RETURN(auto in, InputStream::Open(path));
  out->clear();
  std::string piece(chunk, '\0');
  while (true) {
    size_t got = 0;
    TX_RETURN_IF_ERROR(in->Read(piece.data(), chunk, &got));
    out->append(piece, 0, got);
    if (got < chunk) break;
  }
  if (in->offset() != static_cast<int64_t>(out->size()))
    return errors::Internal("offset ", in->offset(), " after ", out->size(), " bytes");
  return OkStatus();
}

TEST(InputStreamTest, GzipMatchesZlibAtEveryLevelAndReadSize) {
  const std::string data = TestBytes(3 * InputStream::kBufferBytes + 12345, 1);
  for (int level : {0, 1, 6, 9}) {
    const std::string path = WriteFile("lvl" + std::to_string(level) + ".gz", Gzip(data, level));
    for (size_t chunk : {size_t{7}, size_t{4096}, InputStream::kDirectReadBytes,
                         InputStream::kBufferBytes + 3, data.size() + 1}) {
      std::string got;
      ASSERT_TRUE(ReadInChunks(path, chunk, &got).ok()) << level << " " << chunk;
      ASSERT_EQ(got.size(), data.size()) << level << " " << chunk;
      EXPECT_TRUE(got == data) << "level " << level << " chunk " << chunk;
    }
  }
}

// compression_type "ZLIB": one RFC 1950 stream (zlib's compress2), its Adler-32 checked.
TEST(InputStreamTest, ZlibStreamReadsAndItsCorruptionIsDataLoss) {
  const std::string data = TestBytes(InputStream::kBufferBytes + 777, 3);
  std::string z(compressBound(data.size()), '\0');
  uLongf n = z.size();
  ASSERT_EQ(compress2(reinterpret_cast<Bytef*>(z.data()), &n,
                      reinterpret_cast<const Bytef*>(data.data()), data.size(), 6),
            Z_OK);
  z.resize(n);
  for (size_t chunk : {size_t{13}, InputStream::kBufferBytes + 5}) {
    auto in = InputStream::Open(WriteFile("data.z", z), /*zlib=*/true);
    ASSERT_TRUE(in.ok()) << in.status();
    EXPECT_TRUE((*in)->compressed());
    std::string got, piece(chunk, '\0');
    size_t k = 0;
    do {
      ASSERT_TRUE((*in)->Read(piece.data(), chunk, &k).ok());
      got.append(piece, 0, k);
    } while (k == chunk);
    EXPECT_TRUE(got == data) << chunk;
  }
  for (const auto& [name, bytes, why] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"cut.z", z.substr(0, z.size() / 2), "truncated zlib stream"},
           {"adler.z", z.substr(0, z.size() - 1) + static_cast<char>(z.back() ^ 1),
            "corrupt zlib stream"}}) {
    auto in = InputStream::Open(WriteFile(name, bytes), /*zlib=*/true);
    ASSERT_TRUE(in.ok());
    std::string all(data.size() + 1, '\0');
    size_t k = 0;
    const Status st = (*in)->Read(all.data(), all.size(), &k);
    EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss) << name << ": " << st;
    EXPECT_NE(st.message().find(why), std::string::npos) << st;
  }
}

TEST(InputStreamTest, PlainFileDirectAndBufferedReadsInterleave) {
  const std::string data = TestBytes(2 * InputStream::kBufferBytes + 999, 2);
  const std::string path = WriteFile("plain.bin", data);
  auto in = InputStream::Open(path);
  ASSERT_TRUE(in.ok());
  ASSERT_FALSE((*in)->compressed());
  // Small, direct (>= kDirectReadBytes past an empty buffer), small again, then the rest.
  std::string got;
  for (size_t n : {size_t{10}, InputStream::kBufferBytes - 10, size_t{3},
                   InputStream::kDirectReadBytes + 5, size_t{100}, data.size()}) {
    std::string piece(n, '\0');
    size_t k = 0;
    ASSERT_TRUE((*in)->Read(piece.data(), n, &k).ok());
    got.append(piece, 0, k);
    EXPECT_EQ((*in)->offset(), static_cast<int64_t>(got.size()));
  }
  EXPECT_TRUE(got == data);
}

TEST(InputStreamTest, ConcatenatedMembersReadAsOneStream) {
  // `cat a.gz b.gz c.gz`, with an empty member in the middle; lines cross the member borders.
  const std::string a = "first line\nsecond ", b = "", c = "line\n" + TestBytes(300000, 3);
  const std::string path = WriteFile("multi.gz", Gzip(a, 1) + Gzip(b) + Gzip(c, 9));
  for (size_t chunk : {size_t{5}, size_t{1} << 20}) {
    std::string got;
    ASSERT_TRUE(ReadInChunks(path, chunk, &got).ok()) << chunk;
    EXPECT_TRUE(got == a + b + c) << chunk;
  }
  auto in = InputStream::Open(path);
  std::string line;
  ASSERT_TRUE((*in)->ReadLine(&line).ok());
  EXPECT_EQ(line, "first line");
  ASSERT_TRUE((*in)->ReadLine(&line).ok());
  EXPECT_EQ(line, "second line");
}

TEST(InputStreamTest, BytesAfterTheLastMemberAreIgnored) {
  const std::string data = TestBytes(5000, 4);
  for (const std::string& tail : {std::string(512, '\0'), std::string("garbage"),
                                  std::string("\x1f")}) {
    std::string got;
    ASSERT_TRUE(ReadInChunks(WriteFile("tail.gz", Gzip(data) + tail), 1000, &got).ok());
    EXPECT_TRUE(got == data);
  }
}

void ExpectDataLoss(const std::string& name, const std::string& bytes, const char* why) {
  const std::string path = WriteFile(name, bytes);
  for (size_t chunk : {size_t{100}, size_t{1} << 22}) {
    std::string got;
    const Status s = ReadInChunks(path, chunk, &got);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << name << " " << chunk << ": " << s;
    EXPECT_NE(s.message().find("'" + path + "'"), std::string::npos) << s;
    EXPECT_NE(s.message().find(why), std::string::npos) << s;
  }
}

TEST(InputStreamTest, TruncatedStreamsAreDataLoss) {
  const std::string gz = Gzip(TestBytes(200000, 5));
  ExpectDataLoss("cut_header.gz", gz.substr(0, 5), "truncated gzip stream");
  ExpectDataLoss("cut_middle.gz", gz.substr(0, gz.size() / 2), "truncated gzip stream");
  ExpectDataLoss("cut_trailer.gz", gz.substr(0, gz.size() - 3), "truncated gzip stream");
  // A second member cut short is an error too.
  ExpectDataLoss("cut_second.gz", gz + gz.substr(0, gz.size() / 3), "truncated gzip stream");
}

TEST(InputStreamTest, CorruptStreamsAreDataLoss) {
  const std::string data = TestBytes(200000, 6);
  const std::string gz = Gzip(data);
  std::string bad_crc = gz;
  bad_crc[gz.size() - 8] ^= 1;  // the trailer's CRC-32
  ExpectDataLoss("bad_crc.gz", bad_crc, "CRC-32 or length");
  std::string bad_len = gz;
  bad_len[gz.size() - 1] ^= 1;  // the trailer's ISIZE
  ExpectDataLoss("bad_len.gz", bad_len, "CRC-32 or length");
  std::string bad_method = gz;
  bad_method[2] = 7;  // CM: not deflate
  ExpectDataLoss("bad_method.gz", bad_method, "corrupt gzip stream");
  // A deflate block of reserved type 3 (BFINAL 1, BTYPE 11) right after the 10-byte header.
  std::string bad_block = gz.substr(0, 10) + std::string("\x07\0\0\0\0\0\0\0\0\0", 10);
  ExpectDataLoss("bad_block.gz", bad_block, "invalid deflate block");
}

}  // namespace
}  // namespace io
}  // namespace tensorflux
