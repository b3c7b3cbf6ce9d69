// CRC-32C (Castagnoli) and LevelDB's CRC mask, as TensorFlow's tensor bundles and TFRecord files
// use them.
//
// CRC-32C: reflected polynomial 0x82F63B78, initial value 0xFFFFFFFF, final xor 0xFFFFFFFF (the
// iSCSI / SSE4.2 `crc32` checksum). Check value: Value("123456789") == 0xE3069283.
// Mask: rotate right by 15 bits, then add 0xA282EAD8 (mod 2^32), so that a CRC stored inside
// CRC-protected data does not checksum to a fixed point (spec/tf-wire.md §2).
//
// Extend runs ISA-L's crc32_iscsi (libisal, Debian's libisal-dev): on x86-64 it folds three
// interleaved streams of the SSE4.2 `crc32` instruction (or PCLMULQDQ / AVX-512 folding) and picks
// the best code for the CPU at run time, ~3x one `crc32` dependency chain. ISA-L's convention is
// the raw register: crc32_iscsi(p, n, ~c) == ~Extend(c, p, n). ExtendPortable is a slicing-by-8
// table loop kept as the independent reference the tests compare against.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tensorflux {
namespace crc32c {

// The CRC-32C of `data[0, n)` appended to data whose CRC-32C is `init_crc`
// (Extend(Extend(0, a), b) == CRC of a followed by b). Extend(0, ...) is the plain checksum.
uint32_t Extend(uint32_t init_crc, const void* data, size_t n);
// The same through the portable table loop (no ISA-L), for cross-checks.
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
