// Kernel-private: bulk conversion between float and half / bfloat16, vectorized with F16C and
// AVX2 where the build targets them (8 elements per step), scalar otherwise. Results are bit
// for bit those of Half(float), BFloat16(float) and their float conversions (core/types.h):
// round to nearest even, overflow to infinity, NaN stays a quiet NaN.
#pragma once

#include <bit>
#include <cstdint>

#if defined(__AVX2__) || defined(__F16C__)
#include <immintrin.h>
#endif

#include "tensorflux/core/types.h"

namespace tensorflux {
namespace cwise {

inline void ToFloat(const Half* src, float* dst, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__) && defined(__AVX__)
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < n; ++i) dst[i] = HalfToFloat(src[i].bits);
}

inline void FromFloat(const float* src, Half* dst, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__) && defined(__AVX__)
  for (; i + 8 <= n; i += 8) {
    const __m128i h =
        _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
#endif
  for (; i < n; ++i) dst[i].bits = FloatToHalf(src[i]);
}

// bfloat16 is the upper half of a float.
inline uint16_t FloatToBFloat16Bits(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

inline void ToFloat(const BFloat16* src, float* dst, int64_t n) {
  int64_t i = 0;
#if defined(__AVX2__)
  for (; i + 8 <= n; i += 8) {
    const __m256i w =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
  }
#endif
  for (; i < n; ++i) dst[i] = std::bit_cast<float>(static_cast<uint32_t>(src[i].bits) << 16);
}

inline void FromFloat(const float* src, BFloat16* dst, int64_t n) {
  int64_t i = 0;
#if defined(__AVX2__)
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i round = _mm256_set1_epi32(0x7fff);
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff);
  const __m256i inf = _mm256_set1_epi32(0x7f800000);
  const __m256i quiet = _mm256_set1_epi32(0x0040);
  for (; i + 8 <= n; i += 8) {
    const __m256i u = _mm256_castps_si256(_mm256_loadu_ps(src + i));
    const __m256i hi = _mm256_srli_epi32(u, 16);
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(u, _mm256_add_epi32(round, _mm256_and_si256(hi, one))), 16);
    const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
    const __m256i r = _mm256_blendv_epi8(rounded, _mm256_or_si256(hi, quiet), is_nan);
    // 8 x u32 (each < 2^16) -> 8 x u16: pack within 128-bit lanes, then gather lanes 0 and 2.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0xD8);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_castsi256_si128(packed));
  }
#endif
  for (; i < n; ++i) dst[i].bits = FloatToBFloat16Bits(src[i]);
}

}  // namespace cwise
}  // namespace tensorflux
