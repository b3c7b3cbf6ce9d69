// CRC-32C and its mask against the check values in spec/tf-wire.md §2 (iSCSI / RFC 3720 vectors,
// TensorBoard's and LevelDB's record vectors).
#include "tensorflux/core/crc32c.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tensorflux {
namespace {

uint32_t Both(const std::string& s) {
  const uint32_t fast = crc32c::Value(s.data(), s.size());
  EXPECT_EQ(fast, crc32c::ExtendPortable(0, s.data(), s.size())) << "portable path differs";
  return fast;
}

TEST(Crc32cTest, CheckValues) {
  EXPECT_EQ(Both(""), 0x00000000u);
  EXPECT_EQ(Both("123456789"), 0xE3069283u);
  EXPECT_EQ(Both(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Both(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
  EXPECT_EQ(Both(ascending), 0x46DD794Eu);
  // Table entry T[1]: byte 0x01 through the register with no initial or final inversion
  // (Extend inverts on entry and exit, so start from ~0 and invert the result).
  const char one = 1;
  EXPECT_EQ(~crc32c::ExtendPortable(0xFFFFFFFFu, &one, 1), 0xF26B8303u);
}

TEST(Crc32cTest, MaskedRecordVectors) {
  // TensorBoard's record test: payload 1a 11 "CRC test, one two".
  const std::string payload = std::string("\x1a\x11") + "CRC test, one two";
  EXPECT_EQ(crc32c::Mask(Both(payload)), 0x5794D08Au);
  // An empty TFRecord: CRC of its 8 zero length bytes, and mask(CRC of nothing).
  EXPECT_EQ(crc32c::Mask(Both(std::string(8, '\0'))), 0x07980329u);
  EXPECT_EQ(crc32c::Mask(0), 0xA282EAD8u);
}

TEST(Crc32cTest, MaskRoundTripsAndChangesValue) {
  for (uint32_t v : {0u, 1u, 0xE3069283u, 0xFFFFFFFFu, 0x80000000u}) {
    EXPECT_EQ(crc32c::Unmask(crc32c::Mask(v)), v);
    EXPECT_NE(crc32c::Mask(v), v);
  }
}

TEST(Crc32cTest, ExtendConcatenatesAndPathsAgreeOnEveryLengthAndAlignment) {
  std::mt19937 rng(7);
  std::vector<char> buf(300);
  for (char& c : buf) c = static_cast<char>(rng());
  for (size_t start = 0; start < 9; ++start) {
    for (size_t len = 0; start + len <= buf.size(); len += 7) {
      const char* p = buf.data() + start;
      const uint32_t whole = crc32c::Value(p, len);
      ASSERT_EQ(whole, crc32c::ExtendPortable(0, p, len)) << start << " " << len;
      const size_t cut = len / 3;
      ASSERT_EQ(crc32c::Extend(crc32c::Value(p, cut), p + cut, len - cut), whole);
    }
  }
}

// Extend (ISA-L's folding code, which switches strategy with the length) against the table loop
// on lengths up to 200 KB at every alignment mod 8, and across 1 MiB in uneven pieces.
TEST(Crc32cTest, LongBuffersMatchTheTableLoop) {
  std::mt19937 rng(11);
  std::vector<char> buf(1 << 20);
  for (char& c : buf) c = static_cast<char>(rng());
  for (size_t len : {size_t{511}, size_t{1024}, size_t{4097}, size_t{65536}, size_t{200003}}) {
    for (size_t start = 0; start < 8; ++start) {
      ASSERT_EQ(crc32c::Value(buf.data() + start, len),
                crc32c::ExtendPortable(0, buf.data() + start, len))
          << start << " " << len;
    }
  }
  uint32_t pieces = 0;
  for (size_t at = 0, step = 1; at < buf.size(); at += step, step = step * 3 + 1) {
    const size_t n = std::min(step, buf.size() - at);
    pieces = crc32c::Extend(pieces, buf.data() + at, n);
  }
  EXPECT_EQ(pieces, crc32c::ExtendPortable(0, buf.data(), buf.size()));
}

}  // namespace
}  // namespace tensorflux
