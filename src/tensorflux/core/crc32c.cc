#include "tensorflux/core/crc32c.h"

#include <isa-l/crc.h>

#include <array>
#include <climits>
#include <cstring>

namespace tensorflux {
namespace crc32c {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

// kTables[k][b]: the CRC of byte b followed by k zero bytes (slicing-by-8).
using Tables = std::array<std::array<uint32_t, 256>, 8>;
constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[0][b] = c;
  }
  for (int k = 1; k < 8; ++k)
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFF];
  return t;
}
constexpr Tables kTables = MakeTables();

uint64_t LoadLE64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);  // x86/ARM little-endian hosts only (the engine assumes one)
  return v;
}

}  // namespace

uint32_t ExtendPortable(uint32_t init_crc, const void* data, size_t n) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~init_crc;
  for (; n >= 8; n -= 8, p += 8) {
    const uint64_t v = LoadLE64(p) ^ c;
    c = kTables[7][v & 0xFF] ^ kTables[6][(v >> 8) & 0xFF] ^ kTables[5][(v >> 16) & 0xFF] ^
        kTables[4][(v >> 24) & 0xFF] ^ kTables[3][(v >> 32) & 0xFF] ^
        kTables[2][(v >> 40) & 0xFF] ^ kTables[1][(v >> 48) & 0xFF] ^ kTables[0][v >> 56];
  }
  for (; n > 0; --n, ++p) c = (c >> 8) ^ kTables[0][(c ^ *p) & 0xFF];
  return ~c;
}

uint32_t Extend(uint32_t init_crc, const void* data, size_t n) {
  // crc32_iscsi takes an int length and the un-inverted register.
  auto* p = static_cast<unsigned char*>(const_cast<void*>(data));
  uint32_t c = ~init_crc;
  for (; n > 0;) {
    const size_t k = n < size_t{INT_MAX} ? n : size_t{1} << 30;
    c = crc32_iscsi(p, static_cast<int>(k), c);
    p += k;
    n -= k;
  }
  return ~c;
}

}  // namespace crc32c
}  // namespace tensorflux
