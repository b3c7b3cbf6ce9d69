// CRC-32C (Castagnoli) and LevelDB's CRC mask, as TensorFlow's tensor bundles and TFRecord files
// use them.
//
// CRC-32C: reflected polynomial 0x82F63B78, initial value 0xFFFFFFFF, final xor 0xFFFFFFFF (the
// iSCSI / SSE4.2 `crc32` checksum). Check value: Value("123456789") == 0xE3069283.
// Mask: rotate right by 15 bits, then add 0xA282EAD8 (mod 2^32), so that a CRC stored inside
// CRC-protected data does not checksum to a fixed point (spec/tf-wire.md §2).
//
// Neither Debian's Abseil (20220623, before absl/crc) nor any packaged C++ library exports a
// CRC-32C here (LevelDB has one but does not install its header), hence this small one: a
// slicing-by-8 table loop, and the SSE4.2 instruction when the build targets a CPU that has it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tensorflux {
namespace crc32c {

// The CRC-32C of `data[0, n)` appended to data whose CRC-32C is `init_crc`
// (Extend(Extend(0, a), b) == CRC of a followed by b). Extend(0, ...) is the plain checksum.
uint32_t Extend(uint32_t init_crc, const void* data, size_t n);
// The same, always through the portable table loop (Extend uses SSE4.2 when compiled for it).
uint32_t ExtendPortable(uint32_t init_crc, const void* data, size_t n);

inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }

inline constexpr uint32_t kMaskDelta = 0xA282EAD8u;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  const uint32_t r = masked - kMaskDelta;
  return (r >> 17) | (r << 15);
}

}  // namespace crc32c
}  // namespace tensorflux
